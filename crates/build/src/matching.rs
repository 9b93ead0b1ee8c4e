//! Exact minimum-weight perfect matching on a complete graph with an even number of nodes.
//!
//! Pairing the 2K selected facts into K positions is a min-cost perfect matching on a general
//! (non-bipartite) graph, so a bipartite solver would be wrong: this is Edmonds' blossom
//! algorithm, a port of Joris van Rantwijk's `mwmatching.py` (maximum-weight matching,
//! O(n³)), run with `maxcardinality = true` on weights `W − cost`. Every perfect matching has
//! exactly n/2 edges, so maximising Σ(W − cost) over maximum-cardinality matchings is the same
//! as minimising Σ cost over perfect matchings.
//!
//! Floats are converted to integers first so that the dual updates are exact (the original
//! algorithm is exact on integer weights): a cost `c` becomes
//! `round((c_max − c) · scale) + 1` with `scale` = [`COST_RESOLUTION`]⁻¹ = 10⁹ (1e-9 cost
//! units), reduced only if the cost range would overflow 2⁵⁰. The result is optimal for the
//! rounded costs, hence within n/2 · resolution of the true optimum; ties are broken by the
//! algorithm's deterministic order.

/// Cost resolution of the integer conversion (see the module docs).
pub const COST_RESOLUTION: f64 = 1e-9;

const NONE: usize = usize::MAX;

/// Minimum-cost perfect matching of the complete graph on `n` nodes (`n` even).
///
/// Reads `cost[i][j]` for `i < j` only (the matrix is meant to be symmetric). Returns the n/2
/// pairs `(a, b)` with `a < b`, sorted by `a`.
///
/// # Panics
/// If `n` is odd, `cost` is smaller than n×n, or a cost read is not finite: these are
/// programming errors of the caller, not input data errors.
pub fn min_weight_perfect_matching(n: usize, cost: &[Vec<f64>]) -> Vec<(usize, usize)> {
    assert!(
        n.is_multiple_of(2),
        "perfect matching needs an even number of nodes, got {n}"
    );
    if n == 0 {
        return Vec::new();
    }
    assert!(cost.len() >= n && cost.iter().take(n).all(|r| r.len() >= n));
    let mut cmax = f64::NEG_INFINITY;
    let mut cmin = f64::INFINITY;
    for (i, row) in cost.iter().enumerate().take(n) {
        for &c in &row[i + 1..n] {
            assert!(c.is_finite(), "matching cost must be finite");
            cmax = cmax.max(c);
            cmin = cmin.min(c);
        }
    }
    let range = cmax - cmin;
    let limit = (1u64 << 50) as f64;
    let scale = if range / COST_RESOLUTION < limit {
        1.0 / COST_RESOLUTION
    } else {
        limit / range
    };
    let mut edges = Vec::with_capacity(n * (n - 1) / 2);
    for (i, row) in cost.iter().enumerate().take(n) {
        for (j, &c) in row.iter().enumerate().take(n).skip(i + 1) {
            edges.push((i, j, ((cmax - c) * scale).round() as i64 + 1));
        }
    }
    let mate = max_weight_matching(n, &edges, true);
    let mut pairs: Vec<(usize, usize)> = (0..n)
        .filter(|&v| mate[v] != NONE && v < mate[v])
        .map(|v| (v, mate[v]))
        .collect();
    pairs.sort_unstable();
    assert_eq!(
        pairs.len(),
        n / 2,
        "blossom algorithm returned a non-perfect matching"
    );
    pairs
}

/// Maximum-weight matching on integer weights (`mwmatching.py`); returns `mate[v]` or `NONE`.
fn max_weight_matching(
    nvertex: usize,
    edges: &[(usize, usize, i64)],
    maxcardinality: bool,
) -> Vec<usize> {
    if edges.is_empty() {
        return vec![NONE; nvertex];
    }
    let mut m = Mw::new(nvertex, edges);
    m.run(maxcardinality);
    (0..nvertex)
        .map(|v| {
            if m.mate[v] == NONE {
                NONE
            } else {
                m.endpoint[m.mate[v]]
            }
        })
        .collect()
}

/// State of the blossom algorithm; field names follow `mwmatching.py` so the port can be
/// checked line by line. `NONE` stands for Python's −1; label 255 for label −1.
struct Mw<'a> {
    nv: usize,
    edges: &'a [(usize, usize, i64)],
    endpoint: Vec<usize>,
    neighbend: Vec<Vec<usize>>,
    mate: Vec<usize>,
    label: Vec<u8>,
    labelend: Vec<usize>,
    inblossom: Vec<usize>,
    blossomparent: Vec<usize>,
    blossomchilds: Vec<Vec<usize>>,
    blossombase: Vec<usize>,
    blossomendps: Vec<Vec<usize>>,
    bestedge: Vec<usize>,
    blossombestedges: Vec<Option<Vec<usize>>>,
    unusedblossoms: Vec<usize>,
    dualvar: Vec<i64>,
    allowedge: Vec<bool>,
    queue: Vec<usize>,
}

/// Python-style index into a list of length `len` (negative counts from the end).
fn at(j: isize, len: usize) -> usize {
    j.rem_euclid(len as isize) as usize
}

impl<'a> Mw<'a> {
    fn new(nv: usize, edges: &'a [(usize, usize, i64)]) -> Self {
        let maxweight = edges.iter().map(|e| e.2).max().unwrap_or(0).max(0);
        let mut endpoint = Vec::with_capacity(2 * edges.len());
        let mut neighbend = vec![Vec::new(); nv];
        for (k, &(i, j, _)) in edges.iter().enumerate() {
            endpoint.push(i);
            endpoint.push(j);
            neighbend[i].push(2 * k + 1);
            neighbend[j].push(2 * k);
        }
        let mut blossombase: Vec<usize> = (0..nv).collect();
        blossombase.extend(std::iter::repeat_n(NONE, nv));
        let mut dualvar = vec![maxweight; nv];
        dualvar.extend(std::iter::repeat_n(0, nv));
        Mw {
            nv,
            edges,
            endpoint,
            neighbend,
            mate: vec![NONE; nv],
            label: vec![0; 2 * nv],
            labelend: vec![NONE; 2 * nv],
            inblossom: (0..nv).collect(),
            blossomparent: vec![NONE; 2 * nv],
            blossomchilds: vec![Vec::new(); 2 * nv],
            blossombase,
            blossomendps: vec![Vec::new(); 2 * nv],
            bestedge: vec![NONE; 2 * nv],
            blossombestedges: vec![None; 2 * nv],
            unusedblossoms: (nv..2 * nv).collect(),
            dualvar,
            allowedge: vec![false; edges.len()],
            queue: Vec::new(),
        }
    }

    fn slack(&self, k: usize) -> i64 {
        let (i, j, w) = self.edges[k];
        self.dualvar[i] + self.dualvar[j] - 2 * w
    }

    fn blossom_leaves(&self, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![b];
        while let Some(t) = stack.pop() {
            if t < self.nv {
                out.push(t);
            } else {
                // Reverse so leaves come out in the same order as the Python generator.
                stack.extend(self.blossomchilds[t].iter().rev());
            }
        }
        out
    }

    fn assign_label(&mut self, w: usize, t: u8, p: usize) {
        let b = self.inblossom[w];
        debug_assert!(self.label[w] == 0 && self.label[b] == 0);
        self.label[w] = t;
        self.label[b] = t;
        self.labelend[w] = p;
        self.labelend[b] = p;
        self.bestedge[w] = NONE;
        self.bestedge[b] = NONE;
        if t == 1 {
            let leaves = self.blossom_leaves(b);
            self.queue.extend(leaves);
        } else if t == 2 {
            let base = self.blossombase[b];
            let mb = self.mate[base];
            debug_assert!(mb != NONE);
            self.assign_label(self.endpoint[mb], 1, mb ^ 1);
        }
    }

    fn scan_blossom(&mut self, v: usize, w: usize) -> usize {
        let mut path = Vec::new();
        let mut base = NONE;
        let (mut v, mut w) = (v, w);
        while v != NONE || w != NONE {
            let mut b = self.inblossom[v];
            if self.label[b] & 4 != 0 {
                base = self.blossombase[b];
                break;
            }
            debug_assert_eq!(self.label[b], 1);
            path.push(b);
            self.label[b] = 5;
            if self.labelend[b] == NONE {
                v = NONE;
            } else {
                v = self.endpoint[self.labelend[b]];
                b = self.inblossom[v];
                debug_assert_eq!(self.label[b], 2);
                v = self.endpoint[self.labelend[b]];
            }
            if w != NONE {
                std::mem::swap(&mut v, &mut w);
            }
        }
        for b in path {
            self.label[b] = 1;
        }
        base
    }

    fn add_blossom(&mut self, base: usize, k: usize) {
        let (v0, w0, _) = self.edges[k];
        let bb = self.inblossom[base];
        let mut bv = self.inblossom[v0];
        let mut bw = self.inblossom[w0];
        let b = self.unusedblossoms.pop().expect("a free blossom slot");
        self.blossombase[b] = base;
        self.blossomparent[b] = NONE;
        self.blossomparent[bb] = b;
        let mut path = Vec::new();
        let mut endps = Vec::new();
        while bv != bb {
            self.blossomparent[bv] = b;
            path.push(bv);
            endps.push(self.labelend[bv]);
            let v = self.endpoint[self.labelend[bv]];
            bv = self.inblossom[v];
        }
        path.push(bb);
        path.reverse();
        endps.reverse();
        endps.push(2 * k);
        while bw != bb {
            self.blossomparent[bw] = b;
            path.push(bw);
            endps.push(self.labelend[bw] ^ 1);
            let w = self.endpoint[self.labelend[bw]];
            bw = self.inblossom[w];
        }
        debug_assert_eq!(self.label[bb], 1);
        self.label[b] = 1;
        self.labelend[b] = self.labelend[bb];
        self.dualvar[b] = 0;
        self.blossomchilds[b] = path.clone();
        self.blossomendps[b] = endps;
        for v in self.blossom_leaves(b) {
            if self.label[self.inblossom[v]] == 2 {
                self.queue.push(v);
            }
            self.inblossom[v] = b;
        }
        let mut bestedgeto = vec![NONE; 2 * self.nv];
        for &bv in &path {
            let nblists: Vec<Vec<usize>> = match self.blossombestedges[bv].take() {
                Some(list) => vec![list],
                None => self
                    .blossom_leaves(bv)
                    .iter()
                    .map(|&v| self.neighbend[v].iter().map(|p| p / 2).collect())
                    .collect(),
            };
            for nblist in nblists {
                for k in nblist {
                    let (mut i, mut j, _) = self.edges[k];
                    if self.inblossom[j] == b {
                        std::mem::swap(&mut i, &mut j);
                    }
                    let _ = i;
                    let bj = self.inblossom[j];
                    if bj != b
                        && self.label[bj] == 1
                        && (bestedgeto[bj] == NONE || self.slack(k) < self.slack(bestedgeto[bj]))
                    {
                        bestedgeto[bj] = k;
                    }
                }
            }
            self.blossombestedges[bv] = None;
            self.bestedge[bv] = NONE;
        }
        let list: Vec<usize> = bestedgeto.into_iter().filter(|&k| k != NONE).collect();
        self.bestedge[b] = NONE;
        for &k in &list {
            if self.bestedge[b] == NONE || self.slack(k) < self.slack(self.bestedge[b]) {
                self.bestedge[b] = k;
            }
        }
        self.blossombestedges[b] = Some(list);
    }

    fn expand_blossom(&mut self, b: usize, endstage: bool) {
        let childs = self.blossomchilds[b].clone();
        for &s in &childs {
            self.blossomparent[s] = NONE;
            if s < self.nv {
                self.inblossom[s] = s;
            } else if endstage && self.dualvar[s] == 0 {
                self.expand_blossom(s, endstage);
            } else {
                for v in self.blossom_leaves(s) {
                    self.inblossom[v] = s;
                }
            }
        }
        if !endstage && self.label[b] == 2 {
            let len = childs.len();
            let entrychild = self.inblossom[self.endpoint[self.labelend[b] ^ 1]];
            let mut j = childs
                .iter()
                .position(|&c| c == entrychild)
                .expect("entry child") as isize;
            let (jstep, endptrick): (isize, usize) = if j & 1 == 1 {
                j -= len as isize;
                (1, 0)
            } else {
                (-1, 1)
            };
            let mut p = self.labelend[b];
            while j != 0 {
                let e1 = self.endpoint[p ^ 1];
                self.label[e1] = 0;
                let ep = self.blossomendps[b][at(j - endptrick as isize, len)];
                self.label[self.endpoint[ep ^ endptrick ^ 1]] = 0;
                self.assign_label(e1, 2, p);
                self.allowedge[ep / 2] = true;
                j += jstep;
                p = self.blossomendps[b][at(j - endptrick as isize, len)] ^ endptrick;
                self.allowedge[p / 2] = true;
                j += jstep;
            }
            let bv = childs[at(j, len)];
            let e1 = self.endpoint[p ^ 1];
            self.label[e1] = 2;
            self.label[bv] = 2;
            self.labelend[e1] = p;
            self.labelend[bv] = p;
            self.bestedge[bv] = NONE;
            j += jstep;
            while childs[at(j, len)] != entrychild {
                let bv = childs[at(j, len)];
                if self.label[bv] == 1 {
                    j += jstep;
                    continue;
                }
                let found = self
                    .blossom_leaves(bv)
                    .into_iter()
                    .find(|&v| self.label[v] != 0);
                if let Some(v) = found {
                    debug_assert_eq!(self.label[v], 2);
                    self.label[v] = 0;
                    let mb = self.mate[self.blossombase[bv]];
                    self.label[self.endpoint[mb]] = 0;
                    self.assign_label(v, 2, self.labelend[v]);
                }
                j += jstep;
            }
        }
        self.label[b] = 255;
        self.labelend[b] = NONE;
        self.blossomchilds[b].clear();
        self.blossomendps[b].clear();
        self.blossombase[b] = NONE;
        self.blossombestedges[b] = None;
        self.bestedge[b] = NONE;
        self.unusedblossoms.push(b);
    }

    fn augment_blossom(&mut self, b: usize, v: usize) {
        let mut t = v;
        while self.blossomparent[t] != b {
            t = self.blossomparent[t];
        }
        if t >= self.nv {
            self.augment_blossom(t, v);
        }
        let len = self.blossomchilds[b].len();
        let i = self.blossomchilds[b]
            .iter()
            .position(|&c| c == t)
            .expect("child of blossom");
        let mut j = i as isize;
        let (jstep, endptrick): (isize, usize) = if i & 1 == 1 {
            j -= len as isize;
            (1, 0)
        } else {
            (-1, 1)
        };
        while j != 0 {
            j += jstep;
            let t = self.blossomchilds[b][at(j, len)];
            let p = self.blossomendps[b][at(j - endptrick as isize, len)] ^ endptrick;
            if t >= self.nv {
                self.augment_blossom(t, self.endpoint[p]);
            }
            j += jstep;
            let t = self.blossomchilds[b][at(j, len)];
            if t >= self.nv {
                self.augment_blossom(t, self.endpoint[p ^ 1]);
            }
            self.mate[self.endpoint[p]] = p ^ 1;
            self.mate[self.endpoint[p ^ 1]] = p;
        }
        self.blossomchilds[b].rotate_left(i);
        self.blossomendps[b].rotate_left(i);
        self.blossombase[b] = self.blossombase[self.blossomchilds[b][0]];
        debug_assert_eq!(self.blossombase[b], v);
    }

    fn augment_matching(&mut self, k: usize) {
        let (v, w, _) = self.edges[k];
        for (s0, p0) in [(v, 2 * k + 1), (w, 2 * k)] {
            let (mut s, mut p) = (s0, p0);
            loop {
                let bs = self.inblossom[s];
                debug_assert_eq!(self.label[bs], 1);
                if bs >= self.nv {
                    self.augment_blossom(bs, s);
                }
                self.mate[s] = p;
                if self.labelend[bs] == NONE {
                    break;
                }
                let t = self.endpoint[self.labelend[bs]];
                let bt = self.inblossom[t];
                debug_assert_eq!(self.label[bt], 2);
                s = self.endpoint[self.labelend[bt]];
                let j = self.endpoint[self.labelend[bt] ^ 1];
                debug_assert_eq!(self.blossombase[bt], t);
                if bt >= self.nv {
                    self.augment_blossom(bt, j);
                }
                self.mate[j] = self.labelend[bt];
                p = self.labelend[bt] ^ 1;
            }
        }
    }

    fn run(&mut self, maxcardinality: bool) {
        let nv = self.nv;
        for _ in 0..nv {
            self.label.iter_mut().for_each(|l| *l = 0);
            self.bestedge.iter_mut().for_each(|e| *e = NONE);
            self.blossombestedges[nv..]
                .iter_mut()
                .for_each(|e| *e = None);
            self.allowedge.iter_mut().for_each(|a| *a = false);
            self.queue.clear();
            for v in 0..nv {
                if self.mate[v] == NONE && self.label[self.inblossom[v]] == 0 {
                    self.assign_label(v, 1, NONE);
                }
            }
            let mut augmented = false;
            loop {
                while !augmented {
                    let Some(v) = self.queue.pop() else { break };
                    debug_assert_eq!(self.label[self.inblossom[v]], 1);
                    for idx in 0..self.neighbend[v].len() {
                        let p = self.neighbend[v][idx];
                        let k = p / 2;
                        let w = self.endpoint[p];
                        if self.inblossom[v] == self.inblossom[w] {
                            continue;
                        }
                        let mut kslack = 0;
                        if !self.allowedge[k] {
                            kslack = self.slack(k);
                            if kslack <= 0 {
                                self.allowedge[k] = true;
                            }
                        }
                        if self.allowedge[k] {
                            if self.label[self.inblossom[w]] == 0 {
                                self.assign_label(w, 2, p ^ 1);
                            } else if self.label[self.inblossom[w]] == 1 {
                                let base = self.scan_blossom(v, w);
                                if base != NONE {
                                    self.add_blossom(base, k);
                                } else {
                                    self.augment_matching(k);
                                    augmented = true;
                                    break;
                                }
                            } else if self.label[w] == 0 {
                                debug_assert_eq!(self.label[self.inblossom[w]], 2);
                                self.label[w] = 2;
                                self.labelend[w] = p ^ 1;
                            }
                        } else if self.label[self.inblossom[w]] == 1 {
                            let b = self.inblossom[v];
                            if self.bestedge[b] == NONE || kslack < self.slack(self.bestedge[b]) {
                                self.bestedge[b] = k;
                            }
                        } else if self.label[w] == 0
                            && (self.bestedge[w] == NONE || kslack < self.slack(self.bestedge[w]))
                        {
                            self.bestedge[w] = k;
                        }
                    }
                }
                if augmented {
                    break;
                }
                // deltatype 0 stands for Python's −1 (none found yet).
                let mut deltatype = 0u8;
                let mut delta = 0i64;
                let mut deltaedge = NONE;
                let mut deltablossom = NONE;
                if !maxcardinality {
                    deltatype = 1;
                    delta = *self.dualvar[..nv].iter().min().expect("vertices");
                }
                for v in 0..nv {
                    if self.label[self.inblossom[v]] == 0 && self.bestedge[v] != NONE {
                        let d = self.slack(self.bestedge[v]);
                        if deltatype == 0 || d < delta {
                            delta = d;
                            deltatype = 2;
                            deltaedge = self.bestedge[v];
                        }
                    }
                }
                for b in 0..2 * nv {
                    if self.blossomparent[b] == NONE
                        && self.label[b] == 1
                        && self.bestedge[b] != NONE
                    {
                        let kslack = self.slack(self.bestedge[b]);
                        debug_assert_eq!(kslack % 2, 0);
                        let d = kslack / 2;
                        if deltatype == 0 || d < delta {
                            delta = d;
                            deltatype = 3;
                            deltaedge = self.bestedge[b];
                        }
                    }
                }
                for b in nv..2 * nv {
                    if self.blossombase[b] != NONE
                        && self.blossomparent[b] == NONE
                        && self.label[b] == 2
                        && (deltatype == 0 || self.dualvar[b] < delta)
                    {
                        delta = self.dualvar[b];
                        deltatype = 4;
                        deltablossom = b;
                    }
                }
                if deltatype == 0 {
                    deltatype = 1;
                    delta = (*self.dualvar[..nv].iter().min().expect("vertices")).max(0);
                }
                for v in 0..nv {
                    match self.label[self.inblossom[v]] {
                        1 => self.dualvar[v] -= delta,
                        2 => self.dualvar[v] += delta,
                        _ => {}
                    }
                }
                for b in nv..2 * nv {
                    if self.blossombase[b] != NONE && self.blossomparent[b] == NONE {
                        match self.label[b] {
                            1 => self.dualvar[b] += delta,
                            2 => self.dualvar[b] -= delta,
                            _ => {}
                        }
                    }
                }
                match deltatype {
                    1 => break,
                    2 => {
                        self.allowedge[deltaedge] = true;
                        let (mut i, mut j, _) = self.edges[deltaedge];
                        if self.label[self.inblossom[i]] == 0 {
                            std::mem::swap(&mut i, &mut j);
                        }
                        let _ = j;
                        self.queue.push(i);
                    }
                    3 => {
                        self.allowedge[deltaedge] = true;
                        let (i, _, _) = self.edges[deltaedge];
                        self.queue.push(i);
                    }
                    _ => self.expand_blossom(deltablossom, false),
                }
            }
            if !augmented {
                break;
            }
            for b in nv..2 * nv {
                if self.blossomparent[b] == NONE
                    && self.blossombase[b] != NONE
                    && self.label[b] == 1
                    && self.dualvar[b] == 0
                {
                    self.expand_blossom(b, true);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use semtrace_core::rng::Xoshiro256;

    fn total(cost: &[Vec<f64>], pairs: &[(usize, usize)]) -> f64 {
        pairs.iter().map(|&(a, b)| cost[a][b]).sum()
    }

    /// Minimum over all perfect matchings by recursion (first free node paired with each other).
    fn brute(cost: &[Vec<f64>], free: &mut Vec<usize>) -> f64 {
        if free.is_empty() {
            return 0.0;
        }
        let a = free.remove(0);
        let mut best = f64::INFINITY;
        for idx in 0..free.len() {
            let b = free.remove(idx);
            best = best.min(cost[a][b] + brute(cost, free));
            free.insert(idx, b);
        }
        free.insert(0, a);
        best
    }

    // Filling both triangles needs both indices.
    #[allow(clippy::needless_range_loop)]
    fn symmetric(n: usize, mut f: impl FnMut(usize, usize) -> f64) -> Vec<Vec<f64>> {
        let mut c = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                c[i][j] = f(i, j);
                c[j][i] = c[i][j];
            }
        }
        c
    }

    fn check_perfect(n: usize, pairs: &[(usize, usize)]) {
        let mut seen = vec![false; n];
        for &(a, b) in pairs {
            assert!(a < b && !seen[a] && !seen[b]);
            seen[a] = true;
            seen[b] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn agrees_with_brute_force_on_random_instances() {
        let mut rng = Xoshiro256::seed_from_u64(2024);
        for n in [2, 4, 6, 8, 10, 12] {
            for case in 0..60 {
                // Alternate continuous costs, coarse integer costs (many ties) and costs that
                // make odd cycles of cheap edges (blossoms).
                let cost = match case % 3 {
                    0 => symmetric(n, |_, _| rng.next_f64() * 10.0),
                    1 => symmetric(n, |_, _| rng.below(3) as f64),
                    _ => symmetric(n, |i, j| {
                        if i / 3 == j / 3 {
                            rng.next_f64() * 0.1
                        } else {
                            1.0 + rng.next_f64()
                        }
                    }),
                };
                let pairs = min_weight_perfect_matching(n, &cost);
                check_perfect(n, &pairs);
                let want = brute(&cost, &mut (0..n).collect());
                let got = total(&cost, &pairs);
                assert!(
                    (got - want).abs() <= 1e-8,
                    "n={n} case={case}: got {got}, brute force {want}"
                );
            }
        }
    }

    /// Exact optimum by DP over subsets (pair the lowest free node), for n up to ~20.
    fn subset_dp(cost: &[Vec<f64>]) -> f64 {
        let n = cost.len();
        let full = (1usize << n) - 1;
        let mut best = vec![f64::INFINITY; 1 << n];
        best[0] = 0.0;
        for mask in 1..=full {
            if mask.count_ones() % 2 == 1 {
                continue;
            }
            let a = mask.trailing_zeros() as usize;
            let rest = mask & !(1 << a);
            let mut m = f64::INFINITY;
            for b in a + 1..n {
                if rest & (1 << b) != 0 {
                    m = m.min(cost[a][b] + best[rest & !(1 << b)]);
                }
            }
            best[mask] = m;
        }
        best[full]
    }

    #[test]
    fn agrees_with_subset_dp_on_14_and_16_nodes() {
        let mut rng = Xoshiro256::seed_from_u64(31);
        for n in [14, 16] {
            for case in 0..20 {
                let cost = if case % 2 == 0 {
                    symmetric(n, |_, _| rng.next_f64())
                } else {
                    symmetric(n, |_, _| rng.below(4) as f64)
                };
                let pairs = min_weight_perfect_matching(n, &cost);
                check_perfect(n, &pairs);
                assert!((total(&cost, &pairs) - subset_dp(&cost)).abs() <= 1e-8);
            }
        }
    }

    #[test]
    fn negative_and_shifted_costs() {
        let mut rng = Xoshiro256::seed_from_u64(5);
        for _ in 0..50 {
            let cost = symmetric(8, |_, _| rng.next_f64() * 200.0 - 100.0);
            let pairs = min_weight_perfect_matching(8, &cost);
            let want = brute(&cost, &mut (0..8).collect());
            assert!((total(&cost, &pairs) - want).abs() <= 1e-7);
        }
    }

    #[test]
    fn forced_blossom_instance() {
        // Two cheap triangles joined by one cheap edge: the optimum uses the bridge.
        let mut cost = symmetric(6, |_, _| 10.0);
        for (a, b, c) in [
            (0, 1, 1.0),
            (1, 2, 1.0),
            (0, 2, 1.0),
            (3, 4, 1.0),
            (4, 5, 1.0),
            (3, 5, 1.0),
            (2, 3, 1.5),
        ] {
            cost[a][b] = c;
            cost[b][a] = c;
        }
        let pairs = min_weight_perfect_matching(6, &cost);
        assert_eq!(total(&cost, &pairs), 3.5);
        assert!(pairs.contains(&(2, 3)));
    }

    #[test]
    fn large_instances_finish_fast() {
        let mut rng = Xoshiro256::seed_from_u64(9);
        for n in [24, 40] {
            for _ in 0..5 {
                let cost = symmetric(n, |_, _| rng.next_f64());
                let pairs = min_weight_perfect_matching(n, &cost);
                check_perfect(n, &pairs);
                // No single 2-opt exchange between two pairs improves an optimal matching.
                let t = total(&cost, &pairs);
                for x in 0..pairs.len() {
                    for y in x + 1..pairs.len() {
                        let ((a, b), (c, d)) = (pairs[x], pairs[y]);
                        let old = cost[a][b] + cost[c][d];
                        assert!(cost[a][c] + cost[b][d] >= old - 1e-8);
                        assert!(cost[a][d] + cost[b][c] >= old - 1e-8);
                    }
                }
                assert!(t.is_finite());
            }
        }
    }

    #[test]
    fn empty_graph() {
        assert!(min_weight_perfect_matching(0, &[]).is_empty());
    }
}
