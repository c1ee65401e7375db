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
    let starts = i32v(input, "starts");
    let degrees = i32v(input, "degrees");
    let edges = i32v(input, "edges");
    let source = i32v(input, "source")[0] as usize;
    let n = starts.len();
    let mut cost = vec![-1i32; n];
    cost[source] = 0;
    let mut queue = VecDeque::new();
    queue.push_back(source);
    while let Some(u) = queue.pop_front() {
        let first = starts[u] as usize;
        let last = first + degrees[u] as usize;
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
