//! bfs — breadth-first search (Rodinia; WORKLOADS.md §2).
//!
//! Graph generator: Rodinia's `graphgen` — node i draws 2–4 neighbours uniform over all
//! nodes, each with a weight 1–10, and every edge is stored in both directions (self-loops
//! and duplicates allowed, the graph need not be connected); then a random source node.
//! Our generator draws the same quantities from one `SimRng` seeded with `INIT_SEED` (in
//! graphgen's order: edge count, then per edge destination and weight). The CSR form is
//! what Rodinia's bfs loads from graphgen's file: `nodes` = per node (start, degree),
//! `edges` = destinations (Rodinia reads each weight and drops it).
//!
//! Computation (Rodinia's two-kernel formulation): cost[v] = hop distance from the
//! source, −1 if unreachable. Each level is two microblocks, both screened over blocks
//! of nodes, no serial microblock:
//! - MB0 `expand`: for each node in the frontier mask, clear its mask bit and, for each
//!   unvisited neighbour, set cost = cost[u] + 1 and the neighbour's updating bit
//!   (concurrent writes store the same value — a benign race, so screens may run in any
//!   order);
//! - MB1 `update`: move updating bits into the frontier mask and mark them visited.
//!
//! Levels are data-dependent: the kernel generates its graph when it is built and counts
//! the levels (max hop distance + 1: the last level finds nothing new and ends the
//! search), so `microblocks` lists them all; the per-level screen costs are computed from
//! the same frontier sizes and degrees.
//!
//! Sizes (nodes): mini 4,096 (`graph4096`), small 65,536 (`graph65536`), medium 1,000,000
//! (`graph1MW_6`), large 4,000,000 and extralarge 16,000,000 (ours), paper = medium (the
//! OpenMP run script's input; §5.6 gives no size).

use crate::cost::{ld, looped, ops, st, Cost, LOOP_OVERHEAD, LOOP_SETUP};
use crate::dataset::Dataset;
use crate::desc::Access::{InOut, Input, Output};
use crate::desc::{section, Access, DescBuilder, KernelDesc};
use crate::error::KernelError;
use crate::io::{self, Extent};
use crate::kernel::Kernel;
use crate::partition::{even, ScreenPlan};
use crate::reference;
use crate::state::{Data, State};
use nearflash_sim::SimRng;
use std::collections::VecDeque;

pub const NAME: &str = "bfs";
pub const INIT_SEED: u64 = 0xbf5;
const NODES: usize = 0;
const EDGES: usize = 1;
const MASK: usize = 2;
const UPDATING: usize = 3;
const VISITED: usize = 4;
const COST: usize = 5;

/// A generated graph in Rodinia's CSR layout.
#[derive(Debug, Clone)]
pub struct Graph {
    pub starts: Vec<i32>,
    pub degrees: Vec<i32>,
    pub edges: Vec<i32>,
    pub weights: Vec<i32>,
    pub source: usize,
}

pub fn generate(nodes: usize, seed: u64) -> Graph {
    let mut rng = SimRng::seed_from_u64(seed);
    let mut adj: Vec<Vec<(i32, i32)>> = vec![Vec::new(); nodes];
    for i in 0..nodes {
        let count = 2 + rng.below(3);
        for _ in 0..count {
            let dest = rng.below(nodes as u64) as usize;
            let weight = 1 + rng.below(10) as i32;
            adj[i].push((dest as i32, weight));
            adj[dest].push((i as i32, weight));
        }
    }
    let source = rng.below(nodes as u64) as usize;
    let mut g = Graph {
        starts: Vec::with_capacity(nodes),
        degrees: Vec::with_capacity(nodes),
        edges: Vec::new(),
        weights: Vec::new(),
        source,
    };
    for list in adj {
        g.starts.push(g.edges.len() as i32);
        g.degrees.push(list.len() as i32);
        for (d, w) in list {
            g.edges.push(d);
            g.weights.push(w);
        }
    }
    g
}

pub struct Bfs {
    graph: Graph,
    /// Per level, per screen: cost of the expand and update screens.
    expand_cost: Vec<Vec<Cost>>,
    update_cost: Vec<Vec<Cost>>,
    desc: KernelDesc,
}

pub fn dims(d: Dataset) -> usize {
    d.pick([4_096, 65_536, 1_000_000, 4_000_000, 16_000_000, 1_000_000])
}

impl Bfs {
    pub fn new(dataset: Dataset, plan: ScreenPlan) -> Result<Self, KernelError> {
        let nodes = dims(dataset);
        let screens = plan.screens(NAME, "expand", nodes)?;
        let graph = generate(nodes, INIT_SEED);
        let level = Self::levels(&graph);
        let levels = level.iter().flatten().max().copied().unwrap_or(0) as usize + 1;
        let (expand_cost, update_cost) = Self::costs(&graph, &level, levels, screens);
        let mut b = DescBuilder::new(&[("expand", false), ("update", false)]);
        for l in 0..levels as u32 {
            b.push(0, l, screens).push(1, l, screens);
        }
        let (n, m) = (nodes as u64, graph.edges.len() as u64);
        let desc = b.finish(
            NAME,
            dataset,
            format!(
                "nodes={nodes} edges={m} source={} levels={levels}",
                graph.source
            ),
            vec![
                section("nodes", n, 8, Access::Input),
                section("edges", m, 4, Access::Input),
                section("mask", n, 1, Access::InOut),
                section("updating", n, 1, Access::InOut),
                section("visited", n, 1, Access::InOut),
                section("cost", n, 4, Access::InOut),
            ],
            vec!["cost"],
        );
        Ok(Bfs {
            graph,
            expand_cost,
            update_cost,
            desc,
        })
    }

    /// Hop distance of every node (None if unreachable), for the level count and costs.
    fn levels(g: &Graph) -> Vec<Option<u32>> {
        let mut level = vec![None; g.starts.len()];
        level[g.source] = Some(0);
        let mut queue = VecDeque::from([g.source]);
        while let Some(u) = queue.pop_front() {
            let lu = level[u].expect("queued nodes have a level");
            let s = g.starts[u] as usize;
            for &v in &g.edges[s..s + g.degrees[u] as usize] {
                if level[v as usize].is_none() {
                    level[v as usize] = Some(lu + 1);
                    queue.push_back(v as usize);
                }
            }
        }
        level
    }

    /// Cost tables. Expand screen at level l over nodes R: per node load mask + branch;
    /// per frontier node (level l): store mask, load start, degree and cost[u], add;
    /// per edge: load destination and visited, branch; per edge to a node first reached
    /// at level l+1: store cost and updating. Update screen: per node load updating +
    /// branch; per node reached at level l+1: four stores (mask, visited, over,
    /// updating).
    fn costs(
        g: &Graph,
        level: &[Option<u32>],
        levels: usize,
        screens: u32,
    ) -> (Vec<Vec<Cost>>, Vec<Vec<Cost>>) {
        let n = g.starts.len();
        let mut expand = vec![vec![Cost::ZERO; screens as usize]; levels];
        let mut update = vec![vec![Cost::ZERO; screens as usize]; levels];
        for s in 0..screens {
            let range = even(n, screens, s);
            let base = looped(range.len() as u64, ld(1) + ops(1));
            for l in 0..levels {
                expand[l][s as usize] = base;
                update[l][s as usize] = base;
            }
            for u in range {
                let Some(lu) = level[u] else { continue };
                let lu = lu as usize;
                let start = g.starts[u] as usize;
                let out = &g.edges[start..start + g.degrees[u] as usize];
                let fresh = out
                    .iter()
                    .filter(|&&v| level[v as usize] == Some(lu as u32 + 1))
                    .count() as u64;
                expand[lu][s as usize] += st(1)
                    + ld(3)
                    + ops(1 + LOOP_SETUP)
                    + (ld(2) + ops(1 + LOOP_OVERHEAD)).times(out.len() as u64)
                    + st(2).times(fresh);
                if lu >= 1 {
                    update[lu - 1][s as usize] += st(4);
                }
            }
        }
        (expand, update)
    }
}

impl Kernel for Bfs {
    fn desc(&self) -> &KernelDesc {
        &self.desc
    }

    fn init(&self) -> State {
        let g = &self.graph;
        let n = g.starts.len();
        let mut mask = vec![0u8; n];
        let mut visited = vec![0u8; n];
        let mut cost = vec![-1i32; n];
        mask[g.source] = 1;
        visited[g.source] = 1;
        cost[g.source] = 0;
        let mut s = State::new();
        // Rodinia's Node {starting, no_of_edges}, interleaved; edges hold destinations
        // only (Rodinia reads the weights and drops them).
        let nodes: Vec<i32> = g
            .starts
            .iter()
            .zip(&g.degrees)
            .flat_map(|(&s, &d)| [s, d])
            .collect();
        s.push("nodes", &[n, 2], Data::I32(nodes));
        s.push("edges", &[g.edges.len()], Data::I32(g.edges.clone()));
        s.push("mask", &[n], Data::U8(mask));
        s.push("updating", &[n], Data::U8(vec![0; n]));
        s.push("visited", &[n], Data::U8(visited));
        s.push("cost", &[n], Data::I32(cost));
        s.push("source", &[1], Data::I32(vec![g.source as i32]));
        s
    }

    fn compute_screen(&self, mb: usize, screen: u32, st: &mut State) {
        let n = self.graph.starts.len();
        let range = even(n, self.desc.screens(mb), screen);
        if self.desc.microblocks[mb].phase == 0 {
            let mut mask = st.take_u8(MASK);
            let mut updating = st.take_u8(UPDATING);
            let mut cost = st.take_i32(COST);
            let (nodes, edges, visited) = (st.i32s(NODES), st.i32s(EDGES), st.u8s(VISITED));
            for u in range {
                if mask[u] == 0 {
                    continue;
                }
                mask[u] = 0;
                let s = nodes[2 * u] as usize;
                for &v in &edges[s..s + nodes[2 * u + 1] as usize] {
                    let v = v as usize;
                    if visited[v] == 0 {
                        cost[v] = cost[u] + 1;
                        updating[v] = 1;
                    }
                }
            }
            st.put_u8(MASK, mask);
            st.put_u8(UPDATING, updating);
            st.put_i32(COST, cost);
        } else {
            let mut mask = st.take_u8(MASK);
            let mut updating = st.take_u8(UPDATING);
            let mut visited = st.take_u8(VISITED);
            for u in range {
                if updating[u] != 0 {
                    mask[u] = 1;
                    visited[u] = 1;
                    updating[u] = 0;
                }
            }
            st.put_u8(MASK, mask);
            st.put_u8(UPDATING, updating);
            st.put_u8(VISITED, visited);
        }
    }

    fn compute_serial(&self, _mb: usize, _st: &mut State) {
        unreachable!("bfs has no serial microblock")
    }

    fn screen_cost(&self, mb: usize, screen: u32) -> Cost {
        let m = self.desc.microblocks[mb];
        let table = if m.phase == 0 {
            &self.expand_cost
        } else {
            &self.update_cost
        };
        table[m.step as usize][screen as usize]
    }

    fn screen_io(&self, mb: usize, screen: u32) -> Vec<Extent> {
        let g = &self.graph;
        let n = g.starts.len();
        let r = even(n, self.desc.screens(mb), screen);
        if self.desc.microblocks[mb].phase == 0 {
            // the screen's nodes and their CSR edge range; neighbours are anywhere, so
            // visited (read), cost (read parent, write child) and updating (written)
            // are declared whole — the benign race of Rodinia's formulation.
            let first = g.starts.get(r.start).map_or(g.edges.len(), |&s| s as usize);
            let last = g.starts.get(r.end).map_or(g.edges.len(), |&s| s as usize);
            vec![
                io::rows(0, r.clone(), 8, Input),
                io::elems(1, first..last, 4, Input),
                io::elems(2, r, 1, InOut),
                io::all(&self.desc, 4, Input),
                io::all(&self.desc, 5, InOut),
                io::all(&self.desc, 3, Output),
            ]
        } else {
            vec![
                io::elems(3, r.clone(), 1, InOut),
                io::elems(2, r.clone(), 1, Output),
                io::elems(4, r, 1, Output),
            ]
        }
    }

    fn reference(&self, input: &State) -> State {
        reference::bfs::run(input)
    }
}
