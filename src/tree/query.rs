//! Queries: boxes, points, balls, rays and box casts.
//!
//! Leaves are tested by their **fat** boxes; callbacks test the exact shape and can stop
//! the query early. Pending nodes go on a stack that spills to the heap (a `Pending` for
//! the searches, a [`SmallVec`] for the casts: each measures the faster for its walk), so
//! none is dropped however deep the tree.
//! A traversal tests a node's two children and goes straight on into one that passes,
//! pushing the other only when both do: one push and one pop per fork rather than two of
//! each per node. The forms ending in `_in` also skip the leaves
//! and subtrees whose layers fail a [`LayerTest`] (see [`DynamicTree::refresh_layers`]).

use smallvec::SmallVec;

use crate::Vector;
use crate::geometry::{Ball, BoundingBox, Ray, RaySlabs};
use crate::tree::prefetch::prefetch_children;
use crate::tree::{DynamicTree, LayerTest, NodeId, ProxyId};

/// How many pending nodes a walk keeps in place before it spills to the heap: a walk pushes
/// at most one node per level, so only a tree deeper than this spills.
pub(crate) const IN_PLACE: usize = 64;

/// The pending nodes of a walk, the first [`IN_PLACE`] in an array: a push or a pop is one
/// comparison and one copy.
pub(crate) struct Pending<E> {
    in_place: [E; IN_PLACE],
    spilled: Vec<E>,
    len: usize,
}

impl<E: Copy> Pending<E> {
    /// A stack holding `first`.
    #[inline(always)]
    pub(crate) fn new(first: E) -> Self {
        Self {
            in_place: [first; IN_PLACE],
            spilled: Vec::new(),
            len: 1,
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, item: E) {
        if self.len < IN_PLACE {
            self.in_place[self.len] = item;
        } else {
            self.spilled.push(item);
        }
        self.len += 1;
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<E> {
        self.len = self.len.checked_sub(1)?;
        if self.len < IN_PLACE {
            Some(self.in_place[self.len])
        } else {
            self.spilled.pop()
        }
    }
}

/// The closest hit of a ray or cast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The proxy hit.
    pub proxy: ProxyId,
    /// The ray parameter of the hit (units of the ray's direction).
    pub t: f32,
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Calls `f(proxy, data, p)` for every proxy whose fat box passes `test` (`Some(p)`),
    /// with subtrees pruned by the same test, until `f` returns `false`. `pair` is `test`
    /// on a node's two children at once.
    fn walk_hits<P: Copy>(
        &self,
        layers: LayerTest,
        test: impl Fn(&BoundingBox<V>) -> Option<P>,
        pair: impl Fn(&[BoundingBox<V>; 2]) -> [Option<P>; 2],
        mut f: impl FnMut(ProxyId, &T, P) -> bool,
    ) {
        self.walk_leaf_hits(layers, test, pair, |proxy, p| {
            match &self.data[proxy.index()] {
                Some(data) => f(proxy, data, p),
                None => true,
            }
        });
    }

    /// [`Self::walk_hits`] without the proxies' data: `f(proxy, p)`, which spares a
    /// scattered read of the table of payloads per leaf found.
    ///
    /// Depth first. A node is tested before it is entered (the root first), so a popped
    /// node is always entered, with what its test gave. Cases at each node entered: a
    /// leaf, call `f`; internal, test both children: both pass, push the second and go on
    /// into the first; one passes, go on into it; none, take the next node off the stack.
    fn walk_leaf_hits<P: Copy>(
        &self,
        layers: LayerTest,
        test: impl Fn(&BoundingBox<V>) -> Option<P>,
        pair: impl Fn(&[BoundingBox<V>; 2]) -> [Option<P>; 2],
        f: impl FnMut(ProxyId, P) -> bool,
    ) {
        if self.root.is_null() {
            return;
        }
        // One copy of the walk per case, so that a search without a layer test has no
        // per-child branch on it.
        if layers == LayerTest::Any {
            self.walk_leaf_hits_by(test, pair, |_| true, f);
        } else {
            let prune = self.layers_prune();
            self.walk_leaf_hits_by(test, pair, |id| self.may_pass(prune, layers, id), f);
        }
    }

    /// [`Self::walk_leaf_hits`] on a tree with a root, a node or leaf entered only when
    /// `passes` too.
    #[inline(always)]
    fn walk_leaf_hits_by<P: Copy>(
        &self,
        test: impl Fn(&BoundingBox<V>) -> Option<P>,
        pair: impl Fn(&[BoundingBox<V>; 2]) -> [Option<P>; 2],
        passes: impl Fn(NodeId) -> bool,
        mut f: impl FnMut(ProxyId, P) -> bool,
    ) {
        let Some(p) = test(&self.root_box).filter(|_| passes(self.root)) else {
            return;
        };
        let mut stack = Pending::new((self.root, p));
        let (mut visited, mut leaves) = (0u64, 0u64);
        'stack: while let Some((mut id, mut p)) = stack.pop() {
            loop {
                visited += 1;
                if id.is_leaf() {
                    leaves += 1;
                    if !f(id.proxy(), p) {
                        break 'stack;
                    }
                    break;
                }
                let node = &self.nodes[id.index()];
                let [c1, c2] = node.children;
                prefetch_children(&self.nodes, id, [c1, c2]);
                let [hit1, hit2] = pair(&node.boxes);
                let (hit1, hit2) = (hit1.filter(|_| passes(c1)), hit2.filter(|_| passes(c2)));
                (id, p) = match (hit1, hit2) {
                    (Some(a), Some(b)) => {
                        stack.push((c2, b));
                        (c1, a)
                    }
                    (Some(a), None) => (c1, a),
                    (None, Some(b)) => (c2, b),
                    (None, None) => break,
                };
            }
        }
        self.count_visits(visited, leaves);
    }

    /// [`Self::walk_hits`] for a test that passes or fails.
    #[inline]
    fn query_by_in(
        &self,
        layers: LayerTest,
        overlaps: impl Fn(&BoundingBox<V>) -> bool,
        mut f: impl FnMut(ProxyId, &T) -> bool,
    ) {
        let test = |b: &BoundingBox<V>| overlaps(b).then_some(());
        self.walk_hits(layers, test, each(test), |id, data, ()| f(id, data));
    }

    /// Calls `f` for every proxy whose fat box overlaps `aabb` (touching counts). Return
    /// `false` from `f` to stop.
    pub fn query_box(&self, aabb: &BoundingBox<V>, f: impl FnMut(ProxyId, &T) -> bool) {
        self.query_box_in(aabb, LayerTest::Any, f);
    }

    /// [`Self::query_box`] for the proxies whose layers pass `layers` only.
    pub fn query_box_in(
        &self,
        aabb: &BoundingBox<V>,
        layers: LayerTest,
        mut f: impl FnMut(ProxyId, &T) -> bool,
    ) {
        // Both children against the box at once.
        let pairs = aabb.pair_overlap();
        let pair = |b: &[BoundingBox<V>; 2]| pairs.overlaps(b).map(|hit| hit.then_some(()));
        let test = |b: &BoundingBox<V>| b.overlaps(aabb).then_some(());
        self.walk_hits(layers, test, pair, |id, data, ()| f(id, data));
    }

    /// Calls `f(proxy, fat box)` for every proxy whose fat box overlaps `aabb` and whose
    /// layers pass `layers`. Return `false` from `f` to stop.
    pub fn query_box_boxes(
        &self,
        aabb: &BoundingBox<V>,
        layers: LayerTest,
        mut f: impl FnMut(ProxyId, &BoundingBox<V>) -> bool,
    ) {
        // Every leaf of the tree is a live proxy: its data need not be read.
        let test = |b: &BoundingBox<V>| b.overlaps(aabb).then_some(*b);
        self.walk_leaf_hits(layers, test, each(test), |id, b| f(id, &b));
    }

    /// Calls `f` for every proxy whose fat box contains `point`. Return `false` to stop.
    pub fn query_point(&self, point: V, f: impl FnMut(ProxyId, &T) -> bool) {
        self.query_by_in(LayerTest::Any, |b| b.contains_point(point), f);
    }

    /// [`Self::query_point`] for the proxies whose layers pass `layers` only.
    pub fn query_point_in(&self, point: V, layers: LayerTest, f: impl FnMut(ProxyId, &T) -> bool) {
        self.query_by_in(layers, |b| b.contains_point(point), f);
    }

    /// Calls `f` for every proxy whose fat box overlaps `ball`. Return `false` to stop.
    pub fn query_ball(&self, ball: &Ball<V>, f: impl FnMut(ProxyId, &T) -> bool) {
        self.query_by_in(LayerTest::Any, |b| ball.overlaps_box(b), f);
    }

    /// [`Self::query_ball`] for the proxies whose layers pass `layers` only.
    pub fn query_ball_in(
        &self,
        ball: &Ball<V>,
        layers: LayerTest,
        f: impl FnMut(ProxyId, &T) -> bool,
    ) {
        self.query_by_in(layers, |b| ball.overlaps_box(b), f);
    }

    /// The closest proxy hit by `ray` within `max_t`.
    ///
    /// `hit(proxy, data)` tests the exact shape behind a fat box the ray reaches and
    /// returns its ray parameter, or `None` for a miss. Nodes are visited nearest first
    /// and the search range shrinks to the best hit so far, so far-away nodes are skipped.
    pub fn cast_ray(
        &self,
        ray: &Ray<V>,
        max_t: f32,
        hit: impl FnMut(ProxyId, &T) -> Option<f32>,
    ) -> Option<RayHit> {
        self.cast_expanded(ray, V::ZERO, max_t, LayerTest::Any, hit)
    }

    /// [`Self::cast_ray`] for the proxies whose layers pass `layers` only.
    pub fn cast_ray_in(
        &self,
        ray: &Ray<V>,
        max_t: f32,
        layers: LayerTest,
        hit: impl FnMut(ProxyId, &T) -> Option<f32>,
    ) -> Option<RayHit> {
        self.cast_expanded(ray, V::ZERO, max_t, layers, hit)
    }

    /// Casts a box of half extents `half_extents` centered on `ray.origin` along
    /// `ray.direction`: the closest proxy whose fat box it touches within `max_t`,
    /// confirmed by `hit` (which returns the exact parameter, or `None`).
    pub fn cast_box(
        &self,
        ray: &Ray<V>,
        half_extents: V,
        max_t: f32,
        hit: impl FnMut(ProxyId, &T) -> Option<f32>,
    ) -> Option<RayHit> {
        self.cast_expanded(ray, half_extents.abs(), max_t, LayerTest::Any, hit)
    }

    /// [`Self::cast_box`] for the proxies whose layers pass `layers` only.
    pub fn cast_box_in(
        &self,
        ray: &Ray<V>,
        half_extents: V,
        max_t: f32,
        layers: LayerTest,
        hit: impl FnMut(ProxyId, &T) -> Option<f32>,
    ) -> Option<RayHit> {
        self.cast_expanded(ray, half_extents.abs(), max_t, layers, hit)
    }

    /// Closest-hit traversal of the ray against every node box grown by `expand` (the
    /// Minkowski sum that turns a box cast into a ray cast).
    ///
    /// Cases at each popped node: its entry parameter (computed when pushed) is beyond the
    /// best hit so far, skip; otherwise descend from it. At each node of the descent: a
    /// leaf, ask `hit`, shrink the range and end the descent; internal, both children hit,
    /// push the farther and go on into the nearer; one hit, go on into it; none, end.
    fn cast_expanded(
        &self,
        ray: &Ray<V>,
        expand: V,
        max_t: f32,
        layers: LayerTest,
        mut hit: impl FnMut(ProxyId, &T) -> Option<f32>,
    ) -> Option<RayHit> {
        if self.root.is_null()
            || !ray.is_valid()
            || !expand.is_finite()
            || max_t.is_nan()
            || max_t < 0.0
        {
            return None;
        }
        let slabs = RaySlabs::new(ray);
        // A plain ray tests the boxes as they are: a branch that goes the same way for the
        // whole query instead of two additions per box.
        let plain = expand == V::ZERO;
        let grow = |b: &BoundingBox<V>| {
            if plain {
                *b
            } else {
                BoundingBox::from_min_max(b.min - expand, b.max + expand)
            }
        };
        let mut best: Option<RayHit> = None;
        let mut best_t = max_t;
        let mut stack: SmallVec<[(NodeId, f32); 64]> = SmallVec::new();
        let filter = layers != LayerTest::Any;
        let prune = self.layers_prune();
        let passes = |id: NodeId| !filter || self.may_pass(prune, layers, id);
        let t = slabs
            .hit_at(&grow(&self.root_box), best_t)
            .filter(|_| passes(self.root))?;
        stack.push((self.root, t));
        let (mut visited, mut leaves) = (0u64, 0u64);
        while let Some((mut id, t_enter)) = stack.pop() {
            if t_enter > best_t {
                continue;
            }
            loop {
                visited += 1;
                if id.is_leaf() {
                    leaves += 1;
                    let proxy = id.proxy();
                    if let Some(data) = &self.data[proxy.index()]
                        && let Some(t) = hit(proxy, data)
                        && t <= best_t
                        && t >= 0.0
                    {
                        best_t = t;
                        best = Some(RayHit { proxy, t });
                    }
                    break;
                }
                let node = &self.nodes[id.index()];
                let [c1, c2] = node.children;
                prefetch_children(&self.nodes, id, [c1, c2]);
                let t1 = slabs
                    .hit_at(&grow(&node.boxes[0]), best_t)
                    .filter(|_| passes(c1));
                let t2 = slabs
                    .hit_at(&grow(&node.boxes[1]), best_t)
                    .filter(|_| passes(c2));
                id = match (t1, t2) {
                    (Some(a), Some(b)) => {
                        if a <= b {
                            stack.push((c2, b));
                            c1
                        } else {
                            stack.push((c1, a));
                            c2
                        }
                    }
                    (Some(_), None) => c1,
                    (None, Some(_)) => c2,
                    (None, None) => break,
                };
            }
        }
        self.count_visits(visited, leaves);
        best
    }

    /// Calls `f(proxy, data, t)` for every proxy whose fat box `ray` enters within
    /// `max_t` (`t` is the entry parameter into the fat box), in no particular order.
    /// Return `false` from `f` to stop.
    pub fn ray_hits(&self, ray: &Ray<V>, max_t: f32, f: impl FnMut(ProxyId, &T, f32) -> bool) {
        self.ray_hits_in(ray, max_t, LayerTest::Any, f);
    }

    /// [`Self::ray_hits`] for the proxies whose layers pass `layers` only.
    pub fn ray_hits_in(
        &self,
        ray: &Ray<V>,
        max_t: f32,
        layers: LayerTest,
        f: impl FnMut(ProxyId, &T, f32) -> bool,
    ) {
        if self.root.is_null() || !ray.is_valid() || max_t.is_nan() || max_t < 0.0 {
            return;
        }
        let slabs = RaySlabs::new(ray);
        let test = |b: &BoundingBox<V>| slabs.hit_at(b, max_t);
        self.walk_hits(layers, test, each(test), f);
    }
}

/// `test` on a node's two children.
#[inline(always)]
fn each<V: Vector, P>(
    test: impl Fn(&BoundingBox<V>) -> Option<P>,
) -> impl Fn(&[BoundingBox<V>; 2]) -> [Option<P>; 2] {
    move |boxes| [test(&boxes[0]), test(&boxes[1])]
}
