#!/usr/bin/env python3
"""A hand-answered OpenAI-compatible chat endpoint, for recording LLM fixtures (standard library only).

Someone (a person, or an agent acting as the LLM) answers every request by hand; `semtrace build
--llm-url` stores the answers in its own LLM cache, which is the recording
(tests/fixtures/llm-cache/, see its README). Not used by any test.

  llm_record_server.py serve QUEUE [PORT]
      Binds 127.0.0.1 (PORT, default a free one), prints "PORT <n>". Each POST /v1/chat/completions
      is written to QUEUE/NNNN.request.json (the body as sent) and QUEUE/NNNN.prompt.txt (its
      messages, readable); the handler then waits, without a time limit, for QUEUE/NNNN.answer and
      returns that file's text as choices[0].message.content. Run the builder with a long
      --llm-timeout. GET /pending lists the requests still waiting.

  llm_record_server.py check QUEUE NNNN
      Checks QUEUE/NNNN.draft against its request and, if it passes, renames it to NNNN.answer.
      Candidate-fact answers (requests with a response schema): JSON of the schema's shape, at most
      maxItems facts, 12-35 words per fact, a quotation of at least 5 words found verbatim
      (whitespace aside) in the cited unit's paragraph of the prompt, scores in range, a known
      category. Free-text answers (control reviews): the five section headings in order and
      400-1,200 words.

  llm_record_server.py redact CACHE_DIR
      Rewrites every cache entry's "request" (informational only: the builder looks entries up by
      "key") so that message texts are replaced by their SHA-256 and length: the committed cache
      then holds no paper text beyond the answers' short quotations. "key" and "content" stay.
"""
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HEADINGS = ["Summary", "Strengths", "Weaknesses", "Questions for the authors", "Overall score"]


def serve(queue, port):
    os.makedirs(queue, exist_ok=True)
    lock = threading.Lock()
    existing = [int(f[:4]) for f in os.listdir(queue) if re.match(r"^\d{4}\.request\.json$", f)]
    counter = [max(existing, default=0)]
    pending = set()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            with lock:
                self.send(200, {"pending": sorted(pending)})

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with lock:
                counter[0] += 1
                n = "%04d" % counter[0]
                pending.add(n)
            with open(os.path.join(queue, n + ".request.json"), "w") as f:
                json.dump(req, f, indent=1)
            with open(os.path.join(queue, n + ".prompt.txt"), "w") as f:
                rf = req.get("response_format")
                f.write("seed %s, temperature %s, max_tokens %s, schema %s\n\n" % (
                    req.get("seed"), req.get("temperature"), req.get("max_tokens"),
                    rf["json_schema"]["name"] if rf else None))
                for m in req["messages"]:
                    f.write("=== %s ===\n%s\n\n" % (m["role"], m["content"]))
            print("request", n, flush=True)
            answer = os.path.join(queue, n + ".answer")
            while not os.path.exists(answer):
                time.sleep(0.5)
            with open(answer) as f:
                content = f.read()
            with lock:
                pending.discard(n)
            print("answered", n, flush=True)
            self.send(200, {"id": "rec-" + n, "object": "chat.completion", "model": req.get("model"),
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": content}}]})

    srv = ThreadingHTTPServer(("127.0.0.1", port), H)
    srv.daemon_threads = True
    print("PORT", srv.server_address[1], flush=True)
    srv.serve_forever()


def ws(s):
    return " ".join(s.split())


def check_facts(req, content):
    problems = []
    schema = req["response_format"]["json_schema"]["schema"]
    items = schema["properties"]["facts"]
    props = items["items"]["properties"]
    prompt = req["messages"][-1]["content"]
    excerpt = prompt.split("Paper excerpt:\n<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
    units = {}
    for para in excerpt.split("\n\n"):
        m = re.match(r"^\[([^\]]+)\] (.*)$", para, re.S)
        if m:
            units[m.group(1)] = ws(m.group(2))
    doc = json.loads(content)
    facts = doc["facts"]
    if len(facts) > items["maxItems"]:
        problems.append("%d facts > maxItems %d" % (len(facts), items["maxItems"]))
    for i, f in enumerate(facts):
        extra = set(f) - set(props)
        missing = set(props) - set(f)
        if extra or missing:
            problems.append("fact %d: fields extra %s missing %s" % (i, extra, missing))
        n = len(f.get("fact", "").split())
        if not 12 <= n <= 35:
            problems.append("fact %d: %d words" % (i, n))
        if len(f.get("quote", "").split()) < 5:
            problems.append("fact %d: quote under 5 words" % i)
        if not 40 <= len(f.get("fact", "")) <= 320 or not 20 <= len(f.get("quote", "")) <= 400:
            problems.append("fact %d: fact or quote length outside the schema" % i)
        u = f.get("unit")
        if u not in props["unit"]["enum"]:
            problems.append("fact %d: unknown unit %r" % (i, u))
        elif ws(f["quote"]) not in units.get(u, ""):
            problems.append("fact %d: quote not verbatim in %s: %r" % (i, u, f["quote"]))
        for k in ["importance", "verifiability", "natural_expressibility"]:
            if not 0 <= f.get(k, -9) <= 1:
                problems.append("fact %d: %s out of range" % (i, k))
        for k in ["sentiment", "rating_impact"]:
            if not -1 <= f.get(k, -9) <= 1:
                problems.append("fact %d: %s out of range" % (i, k))
        if f.get("category") not in props["category"]["enum"]:
            problems.append("fact %d: category %r" % (i, f.get("category")))
    return problems, "%d facts" % len(facts)


def check_review(content):
    problems = []
    lines = [l.strip() for l in content.splitlines()]
    pos = [lines.index(h) if h in lines else -1 for h in HEADINGS]
    if -1 in pos or pos != sorted(pos):
        problems.append("headings missing or out of order: %s" % pos)
    n = len(content.split())
    if not 400 <= n <= 1200:
        problems.append("%d words" % n)
    return problems, "%d words" % n


def check(queue, n):
    with open(os.path.join(queue, n + ".request.json")) as f:
        req = json.load(f)
    with open(os.path.join(queue, n + ".draft")) as f:
        content = f.read()
    if req.get("response_format"):
        problems, what = check_facts(req, content)
    else:
        problems, what = check_review(content)
    if problems:
        print("NOT accepted (%s):\n  " % what + "\n  ".join(problems))
        sys.exit(1)
    os.rename(os.path.join(queue, n + ".draft"), os.path.join(queue, n + ".answer"))
    print("accepted", n, what)


def redact(cache):
    count = 0
    for root, _, files in os.walk(cache):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                entry = json.load(f)
            req = entry["request"]
            for m in req.get("messages", []):
                if "content" in m:
                    text = m.pop("content")
                    m["content_sha256"] = hashlib.sha256(text.encode()).hexdigest()
                    m["content_chars"] = len(text)
            rf = req.get("response_format")
            if rf and "schema" in rf.get("json_schema", {}):
                schema = rf["json_schema"].pop("schema")
                rf["json_schema"]["schema_sha256"] = hashlib.sha256(
                    json.dumps(schema, sort_keys=True).encode()).hexdigest()
            req["redacted"] = ("message texts and the schema replaced by their SHA-256; the entry is "
                               "found by its key, the SHA-256 of the full canonical request")
            with open(path, "w") as f:
                json.dump(entry, f, indent=2, ensure_ascii=False)
                f.write("\n")
            count += 1
    print("redacted", count, "entries")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    elif cmd == "check":
        check(sys.argv[2], sys.argv[3])
    elif cmd == "redact":
        redact(sys.argv[2])
    else:
        sys.exit(__doc__)
