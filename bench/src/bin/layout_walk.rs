//! Three memory layouts of the same tree, timed on copies of it: a "narrow" arena (every
//! leaf and internal node a node holding its own box), the "wide" layout the crate uses
//! (an internal node holds both of its children's boxes; leaves are not nodes) and a
//! "leaf table" (internal nodes only, each leaf's box in a table by proxy id). It tells
//! what the layout alone does to the pair walk, the refit and the leaf writes.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --bin layout_walk -- [2d|3d] [N]
//! [fast|slow] [ROUNDS]` (defaults: 2d, 10000, fast, 21).
//!
//! The "uniform boxes" scene is run for 300 steps through the crate's tree (the bench
//! driver), so that the tree has the shape of the steady state. Its nodes are then copied,
//! through the public inspection API, into plain arrays:
//!
//! - *narrow*: a node per leaf and internal node, laid out the way rebuilds lay subtrees
//!   out (the root first, each node's two children side by side, depth first), 32 bytes a node in 2D and 40 in 3D
//!   (box, parent, two children, mark, height);
//! - *wide*: only the internal nodes, in the arena's order, each holding the boxes of its
//!   two children and their links (a leaf child is its proxy id with the top bit set),
//!   48 bytes in 2D and 64 in 3D.
//!
//! The same three operations run on each copy, timed in alternation:
//!
//! - *walk*: every overlapping pair of leaves, the tree walked against itself as the
//!   crate's pair update does when every leaf changed (self and cross tasks on a stack, a
//!   leaf against a subtree walked with the leaf's box at hand, the branching variant);
//! - *refit*: every internal box recomputed from the children, children first (explicit
//!   stack);
//! - *leaf writes*: every proxy's box written to its leaf (narrow) or its parent's slot
//!   (wide), in proxy order, through a table of where each proxy sits.
//!
//! Both walks must report the same pairs, and so must a sort-and-sweep over the leaves'
//! boxes; the program stops if they do not. Printed: the medians in µs and wide / narrow,
//! and the bytes per proxy each layout would take with the crate's other per-proxy tables
//! (the proxy's place, the fat box copy and the `Option<u32>` payload slot).
//!
//! This is not the crate's code path: the copies have no change marks, and nothing here
//! rebalances. It measures what the layout alone does to the walk and the refit.

#[path = "../../../benches/support/ours_driver.rs"]
mod ours_driver;
#[path = "../../../benches/support/scene.rs"]
mod scene;

use std::time::Instant;

use bevy_aabb_tree::{BoundingBox, NodeId, Vector};
use glam::{Vec2, Vec3};
use ours_driver::{FromArray, OursBroadPhase};
use scene::Scene;

/// "No node".
const NULL: u32 = u32::MAX;
/// Marks a wide node's child as a leaf; the low bits are its proxy id.
const LEAF: u32 = 1 << 31;

/// A node of the narrow layout: its own box, its links, a change mark and its height.
#[derive(Clone, Copy)]
#[allow(dead_code)]
struct Narrow<V: Vector> {
    aabb: BoundingBox<V>,
    parent: u32,
    child1: u32,
    /// The proxy id in a leaf.
    child2: u32,
    stamp: u16,
    height: u16,
}

/// An internal node holding both children's boxes.
#[derive(Clone, Copy)]
#[allow(dead_code)]
struct Wide<V: Vector> {
    boxes: [BoundingBox<V>; 2],
    child: [u32; 2],
    parent: u32,
    stamp: u16,
    height: u16,
}

#[inline(always)]
fn overlap<V: Vector>(a: &BoundingBox<V>, b: &BoundingBox<V>) -> bool {
    let mut result = true;
    for axis in 0..V::DIM {
        result &= (a.min.axis(axis) <= b.max.axis(axis)) & (b.min.axis(axis) <= a.max.axis(axis));
    }
    result
}

fn ordered(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// The crate's tree copied into both layouts.
struct Layouts<V: Vector> {
    narrow: Vec<Narrow<V>>,
    narrow_root: u32,
    /// Each proxy's leaf in `narrow`.
    narrow_leaf: Vec<u32>,
    wide: Vec<Wide<V>>,
    wide_root: u32,
    /// Each proxy's parent in `wide` times 2, plus its slot.
    wide_place: Vec<u32>,
    /// Each proxy's box, in proxy order (the crate's fat box copy; in the leaf-table
    /// layout, the leaves themselves).
    fat: Vec<BoundingBox<V>>,
    /// Leaf-table layout: only the internal nodes, in the arena's order, each a narrow
    /// node with its children's links tagged (a leaf child is its proxy id with [`LEAF`]
    /// set, its box in `fat`).
    table: Vec<Narrow<V>>,
    table_root: u32,
    /// Each proxy's parent in `table`.
    table_parent: Vec<u32>,
}

impl<V: Vector> Layouts<V> {
    fn copy(tree: &bevy_aabb_tree::DynamicTree<V, u32>) -> Self {
        let root = tree.root().expect("a tree with proxies");
        // Every node, at the place the narrow layout gives it (the root first, then each
        // node's two children side by side, depth first).
        let mut place = std::collections::HashMap::new();
        place.insert(root, 0usize);
        let mut views = vec![None];
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            let view = tree.node(id).expect("a live node");
            views[place[&id]] = Some(view);
            if let Some((a, b)) = view.children {
                place.insert(a, views.len());
                place.insert(b, views.len() + 1);
                views.extend([None, None]);
                stack.push(b);
                stack.push(a);
            }
        }
        let at = |id: NodeId| place[&id];
        let proxies = tree.len();
        let leaf_box = BoundingBox {
            min: V::ZERO,
            max: V::ZERO,
        };
        let raw = |id: Option<NodeId>| id.map_or(NULL, |n| at(n) as u32);
        let mut narrow = Vec::with_capacity(views.len());
        let mut narrow_leaf = vec![NULL; proxies];
        let mut fat = vec![leaf_box; proxies];
        // Wide indices follow the arena order of the internal nodes.
        let mut wide_index = vec![NULL; views.len()];
        let mut internal = 0;
        for (i, view) in views.iter().enumerate() {
            match view {
                Some(v) if v.children.is_some() => {
                    wide_index[i] = internal;
                    internal += 1;
                }
                _ => {}
            }
        }
        for (i, view) in views.iter().enumerate() {
            let node = match view {
                None => Narrow {
                    aabb: leaf_box,
                    parent: NULL,
                    child1: NULL,
                    child2: NULL,
                    stamp: 0,
                    height: u16::MAX,
                },
                Some(v) => {
                    let (child1, child2) = match (v.children, v.proxy) {
                        (Some((a, b)), _) => (raw(Some(a)), raw(Some(b))),
                        (None, Some(p)) => {
                            narrow_leaf[p.index()] = i as u32;
                            fat[p.index()] = v.aabb;
                            (NULL, p.index() as u32)
                        }
                        (None, None) => unreachable!("a leaf has a proxy"),
                    };
                    Narrow {
                        aabb: v.aabb,
                        parent: raw(v.parent),
                        child1,
                        child2,
                        stamp: 0,
                        height: v.height,
                    }
                }
            };
            narrow.push(node);
        }
        let mut wide = Vec::with_capacity(internal as usize);
        let mut wide_place = vec![NULL; proxies];
        for (i, view) in views.iter().enumerate() {
            let Some(v) = view else { continue };
            let Some((a, b)) = v.children else { continue };
            let mut node = Wide {
                boxes: [leaf_box; 2],
                child: [NULL; 2],
                parent: v.parent.map_or(NULL, |p| wide_index[at(p)]),
                stamp: 0,
                height: v.height,
            };
            for (slot, c) in [a, b].into_iter().enumerate() {
                let child = views[at(c)].expect("a live child");
                node.boxes[slot] = child.aabb;
                node.child[slot] = match child.proxy {
                    Some(p) => {
                        wide_place[p.index()] = wide_index[i] * 2 + slot as u32;
                        LEAF | p.index() as u32
                    }
                    None => wide_index[at(c)],
                };
            }
            wide.push(node);
        }
        let mut table = Vec::with_capacity(internal as usize);
        let mut table_parent = vec![NULL; proxies];
        for (i, view) in views.iter().enumerate() {
            let Some(v) = view else { continue };
            let Some((a, b)) = v.children else { continue };
            let mut link = [NULL; 2];
            for (slot, c) in [a, b].into_iter().enumerate() {
                link[slot] = match views[at(c)].expect("a live child").proxy {
                    Some(p) => {
                        table_parent[p.index()] = wide_index[i];
                        LEAF | p.index() as u32
                    }
                    None => wide_index[at(c)],
                };
            }
            table.push(Narrow {
                aabb: v.aabb,
                parent: v.parent.map_or(NULL, |p| wide_index[at(p)]),
                child1: link[0],
                child2: link[1],
                stamp: 0,
                height: v.height,
            });
        }
        Self {
            table,
            table_root: wide_index[0],
            table_parent,
            narrow,
            narrow_root: 0,
            narrow_leaf,
            wide_root: wide_index[0],
            wide,
            wide_place,
            fat,
        }
    }

    /// Every overlapping pair of leaves, narrow layout.
    fn narrow_walk(
        &self,
        out: &mut Vec<(u32, u32)>,
        tasks: &mut Vec<(u32, u32)>,
        walk: &mut Vec<u32>,
    ) {
        let nodes = &self.narrow;
        let leaf = |n: &Narrow<V>| n.child1 == NULL;
        let against = |lbox: &BoundingBox<V>,
                       proxy: u32,
                       top: u32,
                       walk: &mut Vec<u32>,
                       out: &mut Vec<(u32, u32)>| {
            walk.push(top);
            while let Some(n) = walk.pop() {
                let node = &nodes[n as usize];
                for c in [node.child2, node.child1] {
                    let nc = &nodes[c as usize];
                    if overlap(&nc.aabb, lbox) {
                        if leaf(nc) {
                            out.push(ordered(proxy, nc.child2));
                        } else {
                            walk.push(c);
                        }
                    }
                }
            }
        };
        let pair = |a: u32,
                    b: u32,
                    tasks: &mut Vec<(u32, u32)>,
                    walk: &mut Vec<u32>,
                    out: &mut Vec<(u32, u32)>| {
            let (na, nb) = (&nodes[a as usize], &nodes[b as usize]);
            if !overlap(&na.aabb, &nb.aabb) {
                return;
            }
            match (leaf(na), leaf(nb)) {
                (true, true) => out.push(ordered(na.child2, nb.child2)),
                (false, false) => tasks.push((a, b)),
                (true, false) => against(&na.aabb, na.child2, b, walk, out),
                (false, true) => against(&nb.aabb, nb.child2, a, walk, out),
            }
        };
        tasks.push((self.narrow_root, self.narrow_root));
        while let Some((x, y)) = tasks.pop() {
            let nx = &nodes[x as usize];
            if x == y {
                let (c1, c2) = (nx.child1, nx.child2);
                if !leaf(&nodes[c2 as usize]) {
                    tasks.push((c2, c2));
                }
                if !leaf(&nodes[c1 as usize]) {
                    tasks.push((c1, c1));
                }
                pair(c1, c2, tasks, walk, out);
                continue;
            }
            let ny = &nodes[y as usize];
            for (a, b) in [
                (nx.child2, ny.child2),
                (nx.child2, ny.child1),
                (nx.child1, ny.child2),
                (nx.child1, ny.child1),
            ] {
                pair(a, b, tasks, walk, out);
            }
        }
    }

    /// Every overlapping pair of leaves, wide layout.
    fn wide_walk(
        &self,
        out: &mut Vec<(u32, u32)>,
        tasks: &mut Vec<(u32, u32)>,
        walk: &mut Vec<u32>,
    ) {
        let nodes = &self.wide;
        let against = |lbox: &BoundingBox<V>,
                       proxy: u32,
                       top: u32,
                       walk: &mut Vec<u32>,
                       out: &mut Vec<(u32, u32)>| {
            walk.push(top);
            while let Some(n) = walk.pop() {
                let node = &nodes[n as usize];
                for slot in [1, 0] {
                    if overlap(&node.boxes[slot], lbox) {
                        let c = node.child[slot];
                        if c & LEAF != 0 {
                            out.push(ordered(proxy, c & !LEAF));
                        } else {
                            walk.push(c);
                        }
                    }
                }
            }
        };
        let pair = |a: u32,
                    abox: &BoundingBox<V>,
                    b: u32,
                    bbox: &BoundingBox<V>,
                    tasks: &mut Vec<(u32, u32)>,
                    walk: &mut Vec<u32>,
                    out: &mut Vec<(u32, u32)>| {
            if !overlap(abox, bbox) {
                return;
            }
            match (a & LEAF != 0, b & LEAF != 0) {
                (true, true) => out.push(ordered(a & !LEAF, b & !LEAF)),
                (false, false) => tasks.push((a, b)),
                (true, false) => against(abox, a & !LEAF, b, walk, out),
                (false, true) => against(bbox, b & !LEAF, a, walk, out),
            }
        };
        tasks.push((self.wide_root, self.wide_root));
        while let Some((x, y)) = tasks.pop() {
            let nx = &nodes[x as usize];
            if x == y {
                for slot in [1, 0] {
                    if nx.child[slot] & LEAF == 0 {
                        tasks.push((nx.child[slot], nx.child[slot]));
                    }
                }
                pair(
                    nx.child[0],
                    &nx.boxes[0],
                    nx.child[1],
                    &nx.boxes[1],
                    tasks,
                    walk,
                    out,
                );
                continue;
            }
            let ny = &nodes[y as usize];
            for (i, j) in [(1, 1), (1, 0), (0, 1), (0, 0)] {
                pair(
                    nx.child[i],
                    &nx.boxes[i],
                    ny.child[j],
                    &ny.boxes[j],
                    tasks,
                    walk,
                    out,
                );
            }
        }
    }

    /// Every overlapping pair of leaves, leaf-table layout: the narrow walk, but a leaf
    /// child's box is read from the proxy table.
    fn table_walk(
        &self,
        out: &mut Vec<(u32, u32)>,
        tasks: &mut Vec<(u32, u32)>,
        walk: &mut Vec<u32>,
    ) {
        let (nodes, fat) = (&self.table, &self.fat);
        let bounds = |c: u32| -> &BoundingBox<V> {
            if c & LEAF != 0 {
                &fat[(c & !LEAF) as usize]
            } else {
                &nodes[c as usize].aabb
            }
        };
        let against = |lbox: &BoundingBox<V>,
                       proxy: u32,
                       top: u32,
                       walk: &mut Vec<u32>,
                       out: &mut Vec<(u32, u32)>| {
            walk.push(top);
            while let Some(n) = walk.pop() {
                let node = &nodes[n as usize];
                for c in [node.child2, node.child1] {
                    if overlap(bounds(c), lbox) {
                        if c & LEAF != 0 {
                            out.push(ordered(proxy, c & !LEAF));
                        } else {
                            walk.push(c);
                        }
                    }
                }
            }
        };
        let pair = |a: u32,
                    b: u32,
                    tasks: &mut Vec<(u32, u32)>,
                    walk: &mut Vec<u32>,
                    out: &mut Vec<(u32, u32)>| {
            let (ba, bb) = (bounds(a), bounds(b));
            if !overlap(ba, bb) {
                return;
            }
            match (a & LEAF != 0, b & LEAF != 0) {
                (true, true) => out.push(ordered(a & !LEAF, b & !LEAF)),
                (false, false) => tasks.push((a, b)),
                (true, false) => against(ba, a & !LEAF, b, walk, out),
                (false, true) => against(bb, b & !LEAF, a, walk, out),
            }
        };
        tasks.push((self.table_root, self.table_root));
        while let Some((x, y)) = tasks.pop() {
            let nx = &nodes[x as usize];
            if x == y {
                let (c1, c2) = (nx.child1, nx.child2);
                if c2 & LEAF == 0 {
                    tasks.push((c2, c2));
                }
                if c1 & LEAF == 0 {
                    tasks.push((c1, c1));
                }
                pair(c1, c2, tasks, walk, out);
                continue;
            }
            let ny = &nodes[y as usize];
            for (a, b) in [
                (nx.child2, ny.child2),
                (nx.child2, ny.child1),
                (nx.child1, ny.child2),
                (nx.child1, ny.child1),
            ] {
                pair(a, b, tasks, walk, out);
            }
        }
    }

    /// Every internal box from its children, children first, leaf-table layout.
    fn table_refit(&mut self, stack: &mut Vec<(u32, bool)>) {
        let (nodes, fat) = (&mut self.table, &self.fat);
        stack.push((self.table_root, false));
        while let Some((n, done)) = stack.pop() {
            let (c1, c2) = (nodes[n as usize].child1, nodes[n as usize].child2);
            if done {
                let bounds = |c: u32| {
                    if c & LEAF != 0 {
                        fat[(c & !LEAF) as usize]
                    } else {
                        nodes[c as usize].aabb
                    }
                };
                let merged = bounds(c1).merged(&bounds(c2));
                nodes[n as usize].aabb = merged;
                continue;
            }
            stack.push((n, true));
            for c in [c2, c1] {
                if c & LEAF == 0 {
                    stack.push((c, false));
                }
            }
        }
    }

    /// Every internal box from its children, children first.
    fn narrow_refit(&mut self, stack: &mut Vec<(u32, bool)>) {
        let nodes = &mut self.narrow;
        stack.push((self.narrow_root, false));
        while let Some((n, done)) = stack.pop() {
            let (c1, c2) = (nodes[n as usize].child1, nodes[n as usize].child2);
            if done {
                nodes[n as usize].aabb = nodes[c1 as usize].aabb.merged(&nodes[c2 as usize].aabb);
                continue;
            }
            stack.push((n, true));
            for c in [c2, c1] {
                if nodes[c as usize].child1 != NULL {
                    stack.push((c, false));
                }
            }
        }
    }

    /// Every internal child's box from its own children's, children first.
    fn wide_refit(&mut self, stack: &mut Vec<(u32, bool)>) {
        let nodes = &mut self.wide;
        stack.push((self.wide_root, false));
        while let Some((n, done)) = stack.pop() {
            let child = nodes[n as usize].child;
            if done {
                for (slot, c) in child.into_iter().enumerate() {
                    if c & LEAF == 0 {
                        let b = &nodes[c as usize].boxes;
                        let merged = b[0].merged(&b[1]);
                        nodes[n as usize].boxes[slot] = merged;
                    }
                }
                continue;
            }
            stack.push((n, true));
            for c in [child[1], child[0]] {
                if c & LEAF == 0 {
                    stack.push((c, false));
                }
            }
        }
    }

    fn narrow_leaf_writes(&mut self) {
        for (p, fat) in self.fat.iter().enumerate() {
            self.narrow[self.narrow_leaf[p] as usize].aabb = *fat;
        }
    }

    fn wide_leaf_writes(&mut self) {
        for (p, fat) in self.fat.iter().enumerate() {
            let place = self.wide_place[p];
            self.wide[(place >> 1) as usize].boxes[(place & 1) as usize] = *fat;
        }
    }
}

/// Every overlapping pair of boxes, by sorting on the first axis and sweeping.
fn sweep<V: Vector>(boxes: &[BoundingBox<V>]) -> Vec<(u32, u32)> {
    let mut order: Vec<u32> = (0..boxes.len() as u32).collect();
    order.sort_by(|&a, &b| {
        boxes[a as usize]
            .min
            .axis(0)
            .total_cmp(&boxes[b as usize].min.axis(0))
    });
    let mut out = Vec::new();
    for (k, &a) in order.iter().enumerate() {
        let ba = &boxes[a as usize];
        for &b in &order[k + 1..] {
            let bb = &boxes[b as usize];
            if bb.min.axis(0) > ba.max.axis(0) {
                break;
            }
            if ba.overlaps(bb) {
                out.push(ordered(a, b));
            }
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn micros(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e6
}

fn run<V: FromArray<D>, const D: usize>(mut scene: Scene<D>, label: &str, rounds: usize) {
    let mut ours = OursBroadPhase::<V, D>::new(&scene);
    for _ in 0..300 {
        scene.step();
        ours.step(&scene);
    }
    let mut layouts = Layouts::copy(ours.tree());
    let n = layouts.fat.len();
    // Each proxy's parent in the leaf table names it as a child.
    for (p, &parent) in layouts.table_parent.iter().enumerate() {
        let node = &layouts.table[parent as usize];
        let tag = LEAF | p as u32;
        assert!(
            node.child1 == tag || node.child2 == tag,
            "{label}: leaf-table parent of proxy {p}"
        );
    }

    let (mut tasks, mut walk, mut stack) = (Vec::new(), Vec::new(), Vec::new());
    let (mut narrow_pairs, mut wide_pairs, mut table_pairs) = (Vec::new(), Vec::new(), Vec::new());
    layouts.narrow_walk(&mut narrow_pairs, &mut tasks, &mut walk);
    layouts.wide_walk(&mut wide_pairs, &mut tasks, &mut walk);
    layouts.table_walk(&mut table_pairs, &mut tasks, &mut walk);
    let mut expected = sweep(&layouts.fat);
    for list in [
        &mut narrow_pairs,
        &mut wide_pairs,
        &mut table_pairs,
        &mut expected,
    ] {
        list.sort_unstable();
    }
    assert_eq!(
        table_pairs, expected,
        "{label}: leaf-table walk against sort-and-sweep"
    );
    assert_eq!(
        narrow_pairs, expected,
        "{label}: narrow walk against sort-and-sweep"
    );
    assert_eq!(
        wide_pairs, expected,
        "{label}: wide walk against sort-and-sweep"
    );

    let mut t = [(); 8].map(|_| Vec::with_capacity(rounds));
    for _ in 0..rounds {
        narrow_pairs.clear();
        t[0].push(micros(|| {
            layouts.narrow_walk(&mut narrow_pairs, &mut tasks, &mut walk)
        }));
        wide_pairs.clear();
        t[1].push(micros(|| {
            layouts.wide_walk(&mut wide_pairs, &mut tasks, &mut walk)
        }));
        t[2].push(micros(|| layouts.narrow_refit(&mut stack)));
        t[3].push(micros(|| layouts.wide_refit(&mut stack)));
        t[4].push(micros(|| layouts.narrow_leaf_writes()));
        t[5].push(micros(|| layouts.wide_leaf_writes()));
        table_pairs.clear();
        t[6].push(micros(|| {
            layouts.table_walk(&mut table_pairs, &mut tasks, &mut walk)
        }));
        t[7].push(micros(|| layouts.table_refit(&mut stack)));
    }
    let [
        walk_n,
        walk_w,
        refit_n,
        refit_w,
        write_n,
        write_w,
        walk_t,
        refit_t,
    ] = t.map(median);
    // The crate's other per-proxy tables: the proxy's place (4), the fat box copy, the
    // `Option<u32>` payload slot (8).
    let side = 4.0 + core::mem::size_of::<BoundingBox<V>>() as f64 + 8.0;
    let narrow_bytes =
        (layouts.narrow.len() * core::mem::size_of::<Narrow<V>>()) as f64 / n as f64 + side;
    let wide_bytes =
        (layouts.wide.len() * core::mem::size_of::<Wide<V>>()) as f64 / n as f64 + side;
    // The leaf table: the internal nodes, each proxy's parent (in place of its leaf's
    // index), its box (the copy becomes the leaf), the payload slot, and a 2-byte mark
    // per leaf (leaves no longer have nodes to hold one).
    let table_bytes =
        (layouts.table.len() * core::mem::size_of::<Narrow<V>>()) as f64 / n as f64 + side + 2.0;
    println!(
        "{label}: pairs={} walk narrow={walk_n:.1}us wide={walk_w:.1}us ratio={:.2} | refit \
         narrow={refit_n:.1}us wide={refit_w:.1}us ratio={:.2} | leaf writes narrow={write_n:.1}us \
         wide={write_w:.1}us ratio={:.2} | bytes/proxy narrow={narrow_bytes:.1} wide={wide_bytes:.1}",
        expected.len(),
        walk_w / walk_n,
        refit_w / refit_n,
        write_w / write_n,
    );
    println!(
        "{label}: leaf table: walk={walk_t:.1}us ratio={:.2} | refit={refit_t:.1}us \
         ratio={:.2} | leaf writes none (the table is the fat box copy) | \
         bytes/proxy={table_bytes:.1}",
        walk_t / walk_n,
        refit_t / refit_n,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dim = args.first().map_or("2d", String::as_str);
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    // The wide copy needs an internal root: two boxes at least.
    if n < 2 {
        eprintln!("layout_walk: N must be at least 2 (got {n})");
        std::process::exit(2);
    }
    let slow = args.get(2).is_some_and(|s| s == "slow");
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(21);
    let label = format!(
        "layout_walk {dim} n={n} {}",
        if slow { "slow" } else { "fast" }
    );
    if dim == "3d" {
        let vs = if slow {
            Scene::<3>::SLOW
        } else {
            Scene::<3>::FAST
        };
        run::<Vec3, 3>(Scene::<3>::uniform(n, vs), &label, rounds);
    } else {
        let vs = if slow {
            Scene::<2>::SLOW
        } else {
            Scene::<2>::FAST
        };
        run::<Vec2, 2>(Scene::<2>::uniform(n, vs), &label, rounds);
    }
}
