"""A split cross-encoder: the lower encoder layers read the premise and the hypothesis apart, the upper
layers read the pair (DeFormer, Cao et al. 2020; PreTTR, MacAvaney et al. 2020).

Why: the detector scores every window of a review against the same 24 facts. A plain cross-encoder runs
all six layers once per (window, fact) pair; a split one runs the lower `split` layers once per window and
once per fact (the engine caches them) and only the upper layers per pair, so per-pair cost falls to
about (6 - split) / 6 of the full model's.

Training packs the pair as usual (`[CLS] premise [SEP] hypothesis [SEP]`) and gives the lower layers a
block-diagonal attention mask (each token attends only to its own segment) and positions that restart at
the hypothesis. That is exactly what running the lower layers on each segment alone computes, which is
what the exported `lower` graph does; `upper` takes the two segments' hidden states concatenated.

Tokenisation (both here and in the engine): the premise alone as `[CLS] premise [SEP]`, at most
PREMISE_CAP tokens, the hypothesis alone as `hypothesis [SEP]`, at most HYPOTHESIS_CAP, each truncated on
its own so that a segment's tokens never depend on the other segment (a joint `longest_first` truncation
would, and the cache would then be wrong). Below 256 tokens in all this is the plain encoding.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

PREMISE_CAP = 192
HYPOTHESIS_CAP = 64


def encode_split(tok, exs):
    """Token ids and type ids of each example, segment by segment (see the module's docstring)."""
    prem = tok.encode_batch([e["premise"] for e in exs])
    hyp = tok.encode_batch([e["hypothesis"] for e in exs])
    for e, p, h in zip(exs, prem, hyp):
        p_ids = p.ids[:PREMISE_CAP - 1] + [p.ids[-1]] if len(p.ids) > PREMISE_CAP else p.ids
        h_ids = h.ids[1:]  # drop [CLS]: the hypothesis segment is "hypothesis [SEP]"
        h_ids = h_ids[:HYPOTHESIS_CAP - 1] + [h_ids[-1]] if len(h_ids) > HYPOTHESIS_CAP else h_ids
        e["ids"] = p_ids + h_ids
        e["tt"] = [0] * len(p_ids) + [1] * len(h_ids)
    return exs


def _heads(t, h, d):
    return t.view(t.shape[0], -1, h, d).transpose(1, 2)  # [b,h,s,d]


def layer_forward(layer, x, mask, h, d, drop=0.0):
    """One BERT layer in plain ops (the same math as transformers' eager BertLayer); `mask` is additive,
    broadcastable to [b,h,s,s]. `drop` > 0 applies dropout as BERT does (attention probs, both outputs)."""
    sa = layer.attention.self
    q, k, v = _heads(sa.query(x), h, d), _heads(sa.key(x), h, d), _heads(sa.value(x), h, d)
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + mask
    probs = torch.softmax(scores, dim=-1)
    if drop:
        probs = F.dropout(probs, drop, True)
    ctx = torch.matmul(probs, v).transpose(1, 2)
    ctx = ctx.reshape(ctx.shape[0], -1, h * d)
    ao = layer.attention.output
    a = ao.dense(ctx)
    if drop:
        a = F.dropout(a, drop, True)
    x = ao.LayerNorm(a + x)
    o = layer.output.dense(F.gelu(layer.intermediate.dense(x)))
    if drop:
        o = F.dropout(o, drop, True)
    return layer.output.LayerNorm(o + x)


def layer_forward_cls(layer, x, mask, h, d):
    """The last layer for the [CLS] row alone: keys and values of every token, the query, attention
    output and feed-forward of row 0 only. Exact (the pooler reads only that row) and about a sixth of a
    full layer's cost, since per-token work is then just the key and value projections."""
    sa = layer.attention.self
    k, v = _heads(sa.key(x), h, d), _heads(sa.value(x), h, d)
    q = _heads(sa.query(x[:, :1]), h, d)  # [b,h,1,d]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + mask
    ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(x.shape[0], 1, h * d)
    ao = layer.attention.output
    y = ao.LayerNorm(ao.dense(ctx) + x[:, :1])
    return layer.output.LayerNorm(layer.output.dense(F.gelu(layer.intermediate.dense(y))) + y)


def embed(bert, input_ids, token_type_ids, pos):
    emb = bert.embeddings
    x = emb.word_embeddings(input_ids) + emb.position_embeddings(pos) + emb.token_type_embeddings(token_type_ids)
    return emb.LayerNorm(x)


def key_mask(mask, dtype):
    """An additive attention mask [b, 1, 1, s] from a 0/1 key mask [b, s]."""
    return ((1.0 - mask.to(dtype)) * -10000.0).unsqueeze(1).unsqueeze(2)


def segment_start(bert, input_ids, attention_mask, token_type_ids):
    """One segment read alone, positions from 0: its embeddings and its additive key mask."""
    x = embed(bert, input_ids, token_type_ids, bert.embeddings.position_ids[:, :input_ids.shape[1]])
    return x, key_mask(attention_mask, x.dtype)


def head(ce, x, drop=0.0):
    pooled = torch.tanh(ce.bert.pooler.dense(x[:, 0]))
    if drop:
        pooled = F.dropout(pooled, drop, True)
    return ce.classifier(pooled)


class _Split(nn.Module):
    """A trained CrossEncoder (its weights, unchanged in shape) read with a split attention pattern: the
    packed pair `[CLS] premise [SEP] hypothesis [SEP]`, in which a layer below `split` lets query i read key
    j only where `lower_allowed` says so. Subclasses say that, and where the hypothesis's positions start."""

    def __init__(self, ce, split):
        super().__init__()
        n = len(ce.bert.encoder.layer)
        if not 1 <= split < n:
            raise ValueError(f"split {split}: the lower part needs 1..{n - 1} of the model's {n} layers")
        self.ce = ce
        self.split = split
        cfg = ce.bert.config
        self.h = cfg.num_attention_heads
        self.d = cfg.hidden_size // cfg.num_attention_heads
        self.drop = cfg.hidden_dropout_prob

    def positions(self, token_type_ids, attention_mask):
        raise NotImplementedError

    def lower_allowed(self, token_type_ids):
        """[b, s, s] booleans: may query i read key j below the split (padding is masked apart)."""
        raise NotImplementedError

    def forward(self, input_ids, attention_mask, token_type_ids):
        bert = self.ce.bert
        drop = self.drop if self.training else 0.0
        am = attention_mask
        x = embed(bert, input_ids, token_type_ids, self.positions(token_type_ids, am))
        if drop:
            x = F.dropout(x, drop, True)
        def pattern(allowed):
            return ((~(allowed & (am.unsqueeze(1) == 1))).to(x.dtype) * -10000.0).unsqueeze(1)  # [b,1,s,s]

        lower_mask = pattern(self.lower_allowed(token_type_ids))
        alone = getattr(self, "alone", 0)
        alone_mask = pattern(token_type_ids.unsqueeze(2) == token_type_ids.unsqueeze(1)) if alone else None
        full_mask = key_mask(am, x.dtype)  # [b,1,1,s]
        for i, layer in enumerate(bert.encoder.layer):
            mask = alone_mask if i < alone else lower_mask if i < self.split else full_mask
            x = layer_forward(layer, x, mask, self.h, self.d, drop)
        return head(self.ce, x, drop)


class SplitCrossEncoder(_Split):
    """The segments layout: below the split each segment reads only itself, from position 0."""

    def positions(self, token_type_ids, attention_mask):
        n_prem = ((token_type_ids == 0) & (attention_mask == 1)).sum(1, keepdim=True)  # [b,1]
        idx = torch.arange(token_type_ids.shape[1], device=token_type_ids.device).unsqueeze(0)
        return torch.where(token_type_ids == 1, idx - n_prem, idx)

    def lower_allowed(self, token_type_ids):
        return token_type_ids.unsqueeze(2) == token_type_ids.unsqueeze(1)


class Lower(nn.Module):
    """Exported graph 1: one segment alone (a premise `[CLS] p [SEP]`, type 0, or a hypothesis
    `h [SEP]`, type 1), positions from 0 -> its hidden states after the lower layers [b, s, hidden]."""

    def __init__(self, sce):
        super().__init__()
        self.sce = sce

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = self.sce
        bert = s.ce.bert
        x, mask = segment_start(bert, input_ids, attention_mask, token_type_ids)
        for layer in bert.encoder.layer[:s.split]:
            x = layer_forward(layer, x, mask, s.h, s.d)
        return x


class Upper(nn.Module):
    """Exported graph 2: a premise's and a hypothesis's lower states concatenated [b, s, hidden] with
    their mask -> logits [b, 3]."""

    def __init__(self, sce):
        super().__init__()
        self.sce = sce

    def forward(self, hidden, attention_mask):
        s = self.sce
        mask = key_mask(attention_mask, hidden.dtype)
        x = hidden
        upper = s.ce.bert.encoder.layer[s.split:]
        for layer in upper[:-1]:
            x = layer_forward(layer, x, mask, s.h, s.d)
        return head(s.ce, layer_forward_cls(upper[-1], x, mask, s.h, s.d))


class MemoryCrossEncoder(_Split):
    """The premise as memory: in the layers below `split`, premise tokens attend only to the premise,
    while hypothesis tokens attend to both; the layers from `split` on read the pair as usual. A
    premise's lower states (with each lower layer's keys and values) then depend on the premise alone,
    so the engine computes them once per review window, and per pair only the hypothesis tokens run
    through the lower layers. Positions and token types are those of the plain pair encoding, so the
    model starts much closer to the cross-encoder it is initialised from than SplitCrossEncoder does."""

    def positions(self, token_type_ids, attention_mask):
        return self.ce.bert.embeddings.position_ids[:, :token_type_ids.shape[1]]

    def lower_allowed(self, token_type_ids):
        return (token_type_ids == 1).unsqueeze(2) | (token_type_ids == 0).unsqueeze(1)


class HybridCrossEncoder(MemoryCrossEncoder):
    """The memory layout above `alone` layers in which each segment reads only itself (positions restart
    at the hypothesis, as in SplitCrossEncoder): a fact's states after those layers depend on the fact
    alone, so the engine could cache them too, and per pair the fact's tokens run only the layers
    `alone`..`split` - 1 against the premise's cached keys and values. Exported as three entry points
    (export_onnx.HybridGraph): MemoryLower (the premise's memory), HybridHypothesis and HybridUpper."""

    def __init__(self, ce, split, alone):
        super().__init__(ce, split)
        if not 1 <= alone < split:
            raise ValueError(f"hybrid: {alone} segment-alone layers need 1..{split - 1} below split {split}")
        self.alone = alone

    def positions(self, token_type_ids, attention_mask):
        return SplitCrossEncoder.positions(self, token_type_ids, attention_mask)


class MemoryLower(nn.Module):
    """Exported part 1 of a MemoryCrossEncoder: a premise `[CLS] p [SEP]` (type 0, positions from 0) ->
    `[b, 2 * split + 1, s, hidden]`: each lower layer's key and value projections, then the states
    after the lower layers (a HybridCrossEncoder's: `[b, 2 * (split - alone) + 1, s, hidden]`, the
    memory layers' keys and values only)."""

    def __init__(self, mce):
        super().__init__()
        self.m = mce

    def forward(self, input_ids, attention_mask, token_type_ids):
        m = self.m
        bert = m.ce.bert
        x, mask = segment_start(bert, input_ids, attention_mask, token_type_ids)
        outs = []
        # A HybridCrossEncoder's first `alone` layers are not memory: the hypothesis reads no keys there.
        first = getattr(m, "alone", 0)
        for i, layer in enumerate(bert.encoder.layer[:m.split]):
            if i >= first:
                sa = layer.attention.self
                outs += [sa.key(x), sa.value(x)]
            x = layer_forward(layer, x, mask, m.h, m.d)
        outs.append(x)
        return torch.stack(outs, 1)


def memory_upper(m, memory, y, mask, first):
    """The hypothesis states `y` through layers `first`..`m.split` - 1, reading the premise's cached keys
    and values (`memory` planes 2·(i - first), 2·(i - first) + 1, its states last), then the pair through
    the upper layers, the last one for the [CLS] row alone -> logits. `mask`: the additive key mask of
    premise and hypothesis."""
    layers = m.ce.bert.encoder.layer
    for i in range(first, m.split):
        sa = layers[i].attention.self
        j = 2 * (i - first)
        q = _heads(sa.query(y), m.h, m.d)
        k = _heads(torch.cat([memory[:, j], sa.key(y)], 1), m.h, m.d)
        v = _heads(torch.cat([memory[:, j + 1], sa.value(y)], 1), m.h, m.d)
        probs = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(m.d) + mask, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(y.shape[0], -1, m.h * m.d)
        ao = layers[i].attention.output
        y = ao.LayerNorm(ao.dense(ctx) + y)
        y = layers[i].output.LayerNorm(layers[i].output.dense(F.gelu(layers[i].intermediate.dense(y))) + y)
    x = torch.cat([memory[:, 2 * (m.split - first)], y], 1)
    upper = layers[m.split:]
    for layer in upper[:-1]:
        x = layer_forward(layer, x, mask, m.h, m.d)
    return head(m.ce, layer_forward_cls(upper[-1], x, mask, m.h, m.d))


class MemoryUpper(nn.Module):
    """Exported part 2: a premise's memory (MemoryLower's output) with its mask, and a hypothesis
    `h [SEP]` (type 1, positions after the premise's) with its mask -> logits. The hypothesis runs the
    lower layers against the premise's cached keys and values, then the pair runs the upper layers, the
    last one for the [CLS] row alone."""

    def __init__(self, mce):
        super().__init__()
        self.m = mce

    def forward(self, memory, memory_mask, hyp_ids, hyp_mask):
        m = self.m
        bert = m.ce.bert
        n_real = memory_mask.sum(1, keepdim=True)  # [b,1]
        pos = n_real + torch.arange(hyp_ids.shape[1], device=hyp_ids.device).unsqueeze(0)
        y = embed(bert, hyp_ids, torch.ones_like(hyp_ids), pos)
        keys = torch.cat([memory_mask, hyp_mask], 1)
        mask = key_mask(keys, y.dtype)
        return memory_upper(m, memory, y, mask, 0)


class HybridHypothesis(nn.Module):
    """Exported part 2: a hypothesis `h [SEP]` alone (type 1, positions from 0) -> its states after the
    `alone` layers [b, s, hidden], which depend on the fact alone (the engine caches them)."""

    def __init__(self, hce):
        super().__init__()
        self.m = hce

    def forward(self, hyp_input_ids, hyp_attention_mask):
        m = self.m
        bert = m.ce.bert
        y, mask = segment_start(bert, hyp_input_ids, hyp_attention_mask, torch.ones_like(hyp_input_ids))
        for layer in bert.encoder.layer[:m.alone]:
            y = layer_forward(layer, y, mask, m.h, m.d)
        return y


class HybridUpper(nn.Module):
    """Exported part 3: a premise's memory with its mask and a hypothesis's states (HybridHypothesis) with
    its mask -> logits. The hypothesis runs the memory layers against the premise's cached keys and values,
    then the pair the upper layers, the last one for the [CLS] row alone."""

    def __init__(self, hce):
        super().__init__()
        self.m = hce

    def forward(self, memory, memory_mask, hyp_hidden, hyp_mask):
        m = self.m
        y = hyp_hidden
        mask = key_mask(torch.cat([memory_mask, hyp_mask], 1), y.dtype)
        return memory_upper(m, memory, y, mask, m.alone)
