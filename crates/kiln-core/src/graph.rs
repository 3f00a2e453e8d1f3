//! The operation graph IR: tensors plus nodes, its validation and topological order.

use crate::{DataType, Error, Op, Result, TensorDesc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// One node of the graph: a named operation and its compute type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    /// Compute type; kiln computes in f32 (the reference engine in f64).
    #[serde(default = "default_compute")]
    pub compute_type: DataType,
    #[serde(flatten)]
    pub op: Op,
}

fn default_compute() -> DataType {
    DataType::F32
}

/// A graph of tensor operations. After [`OpGraph::validate`] the nodes are in topological order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OpGraph {
    #[serde(default)]
    pub name: String,
    pub tensors: Vec<TensorDesc>,
    pub nodes: Vec<Node>,
}

impl OpGraph {
    /// The tensor with `uid`, or `None`.
    pub fn tensor(&self, uid: i64) -> Option<&TensorDesc> {
        self.tensors.iter().find(|t| t.uid == uid)
    }

    /// The tensor with `uid`, or a `BadParam` naming the node that referenced it.
    pub fn tensor_for(&self, uid: i64, node: &str) -> Result<&TensorDesc> {
        self.tensor(uid).ok_or_else(|| {
            Error::node(
                node,
                format!("refers to tensor uid {uid}, which the graph does not have"),
            )
        })
    }

    /// Tensors that must be bound at execute: non-virtual and not by-value scalars.
    pub fn bound_tensors(&self) -> impl Iterator<Item = &TensorDesc> {
        self.tensors
            .iter()
            .filter(|t| !t.is_virtual && t.scalar.is_none())
    }

    /// The graph's only node, which must be the generic operation `op`, with its name; or an
    /// engine's reason for declining the graph (`what` names the operation it runs).
    pub fn single_generic(
        &self,
        op: &str,
        what: &str,
    ) -> std::result::Result<(&crate::GenericOp, &str), String> {
        let [n] = &self.nodes[..] else {
            return Err(format!(
                "the graph has {} nodes; this engine runs one {op} node",
                self.nodes.len()
            ));
        };
        match &n.op {
            Op::Generic(g) if g.op == op => Ok((g, &n.name)),
            other => Err(format!(
                "node '{}' is {}; this engine runs {what} only",
                n.name,
                other.describe()
            )),
        }
    }

    /// The index of the node that writes `uid` (as any of its outputs), if any.
    pub fn producer(&self, uid: i64) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.op.outputs().contains(&uid))
    }

    /// Indices of the nodes that read `uid`.
    pub fn consumers(&self, uid: i64) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].op.inputs().contains(&uid))
            .collect()
    }

    /// Validates the whole graph and puts its nodes in topological order.
    ///
    /// Rules, each with an error naming the tensor or node at fault: at least one node; every
    /// tensor well-formed (rank, dims, strides, alignment, scalar rules); unique UIDs and node
    /// names; every referenced UID exists; a tensor written by at most one node, never a by-value
    /// scalar; no cycles; virtual tensors both written and read; every other tensor that no node
    /// writes is read by some node; every node's result reaches a non-virtual output; the nodes
    /// form one connected graph; each node's operand ranks, dims and types are consistent.
    pub fn validate(&mut self) -> Result<()> {
        if self.nodes.is_empty() {
            return Err(Error::BadParam("the graph has no operations".into()));
        }
        let mut uids = HashSet::new();
        for t in &self.tensors {
            t.validate()?;
            if !uids.insert(t.uid) {
                return Err(t.error(format!("uid {} is used by more than one tensor", t.uid)));
            }
        }
        let mut names = HashSet::new();
        for n in &self.nodes {
            if n.name.is_empty() {
                return Err(Error::BadParam(format!(
                    "a {} node has an empty name",
                    n.op.describe()
                )));
            }
            if !names.insert(n.name.as_str()) {
                return Err(Error::BadParam(format!(
                    "node name '{}' is used twice",
                    n.name
                )));
            }
            if n.compute_type != DataType::F32 {
                return Err(Error::NotSupported(format!(
                    "node '{}': compute type {} is not supported; kiln computes in f32",
                    n.name, n.compute_type
                )));
            }
            if let Op::Generic(g) = &n.op {
                crate::ops::check_generic(g, &format!("node '{}' ({})", n.name, g.op))?;
            }
            for uid in n.op.inputs().into_iter().chain(n.op.outputs()) {
                self.tensor_for(uid, &n.name)?;
            }
            let ins = n.op.inputs();
            if let Some(out) = n.op.outputs().into_iter().find(|o| ins.contains(o)) {
                return Err(Error::node(
                    &n.name,
                    format!("writes tensor uid {out} that it also reads"),
                ));
            }
        }
        let mut writer: HashMap<i64, String> = HashMap::new();
        for n in &self.nodes {
            for out in n.op.outputs() {
                if let Some(prev) = writer.insert(out, n.name.clone()) {
                    return Err(self.tensor_for(out, &n.name)?.error(format!(
                        "written by both node '{prev}' and node '{}'",
                        n.name
                    )));
                }
                let t = self.tensor_for(out, &n.name)?;
                if t.scalar.is_some() {
                    return Err(Error::node(
                        &n.name,
                        format!("writes {}, a by-value scalar", t.label()),
                    ));
                }
            }
        }
        self.sort_topologically()?;
        for t in &self.tensors {
            let written = writer.contains_key(&t.uid);
            let read = self.nodes.iter().any(|n| n.op.inputs().contains(&t.uid));
            if t.is_virtual && !written {
                return Err(t.error("it is virtual but no node writes it"));
            }
            if t.is_virtual && !read {
                return Err(t.error(
                    "it is virtual but no node reads it: mark it as an output or remove it",
                ));
            }
            if !written && !read {
                return Err(t.error("it is not used by any node"));
            }
        }
        self.check_outputs_reachable()?;
        self.check_connected()?;
        for n in &self.nodes {
            self.check_node(n)?;
        }
        Ok(())
    }

    /// Reorders the nodes topologically (stable: ties keep their original order).
    fn sort_topologically(&mut self) -> Result<()> {
        let count = self.nodes.len();
        let producer: HashMap<i64, usize> = self
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.op.outputs().into_iter().map(move |o| (o, i)))
            .collect();
        let deps: Vec<Vec<usize>> = self
            .nodes
            .iter()
            .map(|n| {
                n.op.inputs()
                    .iter()
                    .filter_map(|u| producer.get(u).copied())
                    .collect()
            })
            .collect();
        let mut done = vec![false; count];
        let mut order = Vec::with_capacity(count);
        while order.len() < count {
            let next = (0..count).find(|&i| !done[i] && deps[i].iter().all(|&d| done[d]));
            match next {
                Some(i) => {
                    done[i] = true;
                    order.push(i);
                }
                None => {
                    let stuck = (0..count).find(|&i| !done[i]).unwrap_or(0);
                    return Err(Error::BadParam(format!(
                        "the graph has a cycle through node '{}'",
                        self.nodes[stuck].name
                    )));
                }
            }
        }
        let mut old: Vec<Option<Node>> = std::mem::take(&mut self.nodes)
            .into_iter()
            .map(Some)
            .collect();
        self.nodes = order.into_iter().filter_map(|i| old[i].take()).collect();
        Ok(())
    }

    fn check_outputs_reachable(&self) -> Result<()> {
        // Walk backwards from the non-virtual tensors that nodes write.
        let mut live: HashSet<usize> = HashSet::new();
        let mut stack: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| {
                self.nodes[i]
                    .op
                    .outputs()
                    .into_iter()
                    .any(|o| self.tensor(o).is_some_and(|t| !t.is_virtual))
            })
            .collect();
        if stack.is_empty() {
            return Err(Error::BadParam(
                "the graph has no output: mark at least one tensor that a node writes as an output"
                    .into(),
            ));
        }
        while let Some(i) = stack.pop() {
            if live.insert(i) {
                for uid in self.nodes[i].op.inputs() {
                    if let Some(p) = self.producer(uid) {
                        stack.push(p);
                    }
                }
            }
        }
        match (0..self.nodes.len()).find(|i| !live.contains(i)) {
            Some(i) => Err(Error::node(
                &self.nodes[i].name,
                "its result never reaches an output tensor",
            )),
            None => Ok(()),
        }
    }

    fn check_connected(&self) -> Result<()> {
        let count = self.nodes.len();
        let mut parent: Vec<usize> = (0..count).collect();
        fn find(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        let mut first_user: BTreeMap<i64, usize> = BTreeMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for uid in n.op.inputs().into_iter().chain(n.op.outputs()) {
                if self.tensor(uid).is_some_and(|t| t.scalar.is_some()) {
                    continue;
                }
                match first_user.get(&uid) {
                    Some(&j) => {
                        let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                        parent[a] = b;
                    }
                    None => {
                        first_user.insert(uid, i);
                    }
                }
            }
        }
        let root = find(&mut parent, 0);
        match (1..count).find(|&i| find(&mut parent, i) != root) {
            Some(i) => Err(Error::BadParam(format!(
                "the graph is not connected: node '{}' shares no tensor with node '{}' or \
                 the nodes linked to it; build separate graphs instead",
                self.nodes[i].name, self.nodes[0].name
            ))),
            None => Ok(()),
        }
    }

    fn check_node(&self, n: &Node) -> Result<()> {
        let what = format!("node '{}' ({})", n.name, n.op.describe());
        n.op.validate(self, &n.name, &what)
    }
}
