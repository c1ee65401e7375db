//! bfs reference: a serial queue-based BFS over the CSR graph.

use super::result;
use crate::state::{Data, State};
use std::collections::VecDeque;

fn i32v<'a>(s: &'a State, name: &str) -> &'a [i32] {
    match &s.get(name).expect(name).data {
        Data::I32(v) => v,
        _ => panic!("{name} is not i32"),
    }
}

pub fn run(input: &State) -> State {
    let nodes = i32v(input, "nodes");
    let edges = i32v(input, "edges");
    let source = i32v(input, "source")[0] as usize;
    let n = nodes.len() / 2;
    let mut cost = vec![-1i32; n];
    cost[source] = 0;
    let mut queue = VecDeque::new();
    queue.push_back(source);
    while let Some(u) = queue.pop_front() {
        let first = nodes[2 * u] as usize;
        let last = first + nodes[2 * u + 1] as usize;
        for e in first..last {
            let v = edges[e] as usize;
            if cost[v] < 0 {
                cost[v] = cost[u] + 1;
                queue.push_back(v);
            }
        }
    }
    result(vec![("cost", vec![n], Data::I32(cost))])
}
