//! Building a whole tree, or one subtree, at once (binned SAH).

use glam::Vec4;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::constants::{BINS, BULK_INSERT_FROM, SIZES_FROM, SIZES_MIN_ITEMS};
use crate::tree::{DynamicTree, Leaf, Node, NodeId, ProxyId, Stamp, TreeError};

/// One item of a build: a leaf, or a whole subtree kept as it is and placed like a leaf.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuildItem<V: Vector> {
    pub aabb: BoundingBox<V>,
    pub node: NodeId,
    /// The item's change mark, kept by the build.
    pub stamp: Stamp,
}

impl<V: Vector> BuildItem<V> {
    /// Child `k` of `node`, with the box and mark `node` holds for it.
    #[inline(always)]
    pub(crate) fn child_of(node: &Node<V>, k: usize) -> Self {
        Self {
            aabb: node.boxes[k],
            node: node.children[k],
            stamp: node.stamps[k],
        }
    }
}

/// Buffers reused from one build to the next, so that the incremental rebuilds done by every
/// [`DynamicTree::update_pairs`] allocate nothing once they have grown.
#[derive(Debug, Default)]
pub(crate) struct BuildScratch<V: Vector> {
    pub items: Vec<BuildItem<V>>,
    /// Each item's [`DynamicTree::sort_keys`], reordered with the items.
    keys: Vec<[f32; 4]>,
    /// The bin of each item of the range being split, by place and by size.
    bins: [Vec<u8>; 2],
    /// Ranges still to split: (start, end, parent, slot in the parent). All four are 32 bits:
    /// a task is often read right after it is written, and a narrower field read as part of
    /// a wider load would wait for the write to reach the cache.
    tasks: Vec<(u32, u32, NodeId, u32)>,
    /// Internal nodes created, parents before children.
    internal: Vec<NodeId>,
    /// Nodes still to visit while collecting items, with the box and mark their parent holds.
    pub stack: Vec<BuildItem<V>>,
}

impl<V: Vector> BuildScratch<V> {
    /// Drops the splits' keys and bins after a build of the whole tree: sized for every leaf,
    /// they far outsize what the incremental rebuilds need, and held for good they slow the
    /// plugin's later scans of a large level's components.
    fn drop_sort_buffers(&mut self) {
        self.keys = Vec::new();
        self.bins = [Vec::new(), Vec::new()];
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Adds many proxies at once and rebuilds the whole tree top-down, which is faster than
    /// inserting them one by one and gives a better tree. Fat boxes are the tight boxes grown
    /// by the margin. New proxies count as moved.
    ///
    /// The proxies already in the tree go into the same build, keeping their ids, fat boxes
    /// and moved marks; the arena is laid out anew in depth-first order with no free slot, so
    /// every internal [`NodeId`] may change. With no items, this rebuilds the tree as it
    /// stands (after many single insertions, for a better tree).
    ///
    /// # Errors
    ///
    /// [`TreeError::InvalidBox`] when any box is invalid (the error names none of them; check
    /// with [`BoundingBox::is_valid`] first to find which), [`TreeError::Full`] when the
    /// proxies would outnumber 2³⁰. Nothing is added then.
    pub fn build(
        &mut self,
        items: impl IntoIterator<Item = (BoundingBox<V>, T)>,
    ) -> Result<Vec<ProxyId>, TreeError> {
        let items: Vec<_> = items.into_iter().collect();
        if items
            .iter()
            .any(|(b, _)| !b.is_valid() || !self.fatten(b, V::ZERO).is_valid())
        {
            return Err(TreeError::InvalidBox);
        }
        if !self.has_room(items.len()) {
            return Err(TreeError::Full);
        }
        let new_ids = items.len().saturating_sub(self.free_proxies.len());
        // Room for the new leaves and the internal nodes joining them to the rest.
        self.nodes.reserve(items.len());
        self.leaves.reserve(new_ids);
        if self.move_cache {
            self.fat_boxes.reserve(new_ids);
        }
        self.data.reserve(new_ids);
        let mut new = Vec::with_capacity(items.len());
        for (tight, data) in items {
            let fat = self.fatten(&tight, V::ZERO);
            new.push((self.allocate_proxy(fat, data), fat));
        }
        self.link_unlinked(&new);
        Ok(new.into_iter().map(|(id, _)| id).collect())
    }

    /// Adds many proxies at once, as [`Self::create_proxy`] on each `(tight, data)` in order,
    /// and returns their ids in that order. When they are many (at least 32, and at least a
    /// quarter of the tree they join: a level spawned in one frame) the whole tree is rebuilt
    /// with them in one build, as [`Self::build`] does; otherwise each is inserted.
    ///
    /// # Errors
    ///
    /// As [`Self::build`]: nothing is added when any box is invalid or the tree is full.
    pub fn create_proxies(
        &mut self,
        items: impl IntoIterator<Item = (BoundingBox<V>, T)>,
    ) -> Result<Vec<ProxyId>, TreeError> {
        let items: Vec<_> = items.into_iter().collect();
        let count = items.len();
        if count >= BULK_INSERT_FROM && count * 4 >= self.len() + count {
            return self.build(items);
        }
        if items
            .iter()
            .any(|(b, _)| !b.is_valid() || !self.fatten(b, V::ZERO).is_valid())
        {
            return Err(TreeError::InvalidBox);
        }
        if !self.has_room(count) {
            return Err(TreeError::Full);
        }
        let mut ids = Vec::with_capacity(count);
        for (tight, data) in items {
            let fat = self.fatten(&tight, V::ZERO);
            let id = self.allocate_proxy(fat, data);
            self.insert_leaf(NodeId::leaf(id), fat);
            self.mark_moved(NodeId::leaf(id));
            ids.push(id);
        }
        Ok(ids)
    }

    /// Links proxies given ids but not linked yet (with their fat boxes), marked moved, with
    /// one build of the whole tree.
    fn link_unlinked(&mut self, unlinked: &[(ProxyId, BoundingBox<V>)]) {
        let mut scratch = self.take_leaves();
        scratch
            .items
            .extend(unlinked.iter().map(|&(id, aabb)| BuildItem {
                aabb,
                node: NodeId::leaf(id),
                stamp: 0,
            }));
        self.build_whole(scratch);
        for &(id, _) in unlinked {
            self.mark_moved(NodeId::leaf(id));
        }
    }

    /// Removes many proxies at once and returns how many it removed (ids that are not live
    /// are skipped, as are repeats). When they are at least a quarter of the tree, the proxies
    /// that remain are rebuilt into a new tree (one build, as [`Self::build`] makes) instead
    /// of one removal each, which is what a level unloaded in one frame needs. Either way the
    /// remaining proxies keep their ids, fat boxes and moved marks.
    pub fn destroy_proxies(&mut self, ids: &[ProxyId]) -> usize {
        if ids.len() * 4 < self.proxy_count {
            return ids
                .iter()
                .filter(|&&id| self.destroy_proxy(id).is_ok())
                .count();
        }
        let mut scratch = self.take_leaves();
        let mut removed = 0;
        for &id in ids {
            if self.live_leaf(id).is_none() {
                continue;
            }
            self.forget_layers(id);
            self.leaves[id.index()] = Leaf::FREE;
            self.free_proxies.push(id.0);
            self.data[id.index()] = None;
            self.proxy_count -= 1;
            removed += 1;
        }
        let epoch = self.epoch;
        let mut marked_gone = 0;
        scratch.items.retain(|item| {
            let live = self.live_leaf(item.node.proxy()).is_some();
            if !live && item.stamp == epoch {
                marked_gone += 1;
            }
            live
        });
        self.moved_count -= marked_gone;
        self.optimizer.candidates.clear();
        self.build_whole(scratch);
        removed
    }

    /// Takes the build scratch with every leaf of the tree in `items` (with the box and mark
    /// its parent holds for it) and frees every internal node: the start of a whole build.
    fn take_leaves(&mut self) -> BuildScratch<V> {
        let mut scratch = core::mem::take(&mut self.scratch.build);
        scratch.items.clear();
        if self.root.is_null() {
            return scratch;
        }
        scratch.stack.clear();
        scratch.stack.push(BuildItem {
            aabb: self.root_box,
            node: self.root,
            stamp: self.root_stamp,
        });
        while let Some(item) = scratch.stack.pop() {
            if item.node.is_leaf() {
                scratch.items.push(item);
                continue;
            }
            let node = &self.nodes[item.node.index()];
            for k in [1, 0] {
                scratch.stack.push(BuildItem::child_of(node, k));
            }
            self.free_node(item.node);
        }
        scratch
    }

    /// Builds the whole tree over `scratch.items`, [compacted](Self::compact).
    fn build_whole(&mut self, mut scratch: BuildScratch<V>) {
        let first_split = self.sort_for_build(&mut scratch.items);
        self.root = NodeId::NULL;
        if !scratch.items.is_empty() {
            self.build_items(&mut scratch, first_split);
        }
        scratch.drop_sort_buffers();
        self.scratch.build = scratch;
        self.compact();
    }

    /// Orders the leaves of a whole-tree build by proxy id (so that the result does not
    /// depend on the order they were found in), those that interact with nothing (see
    /// [`crate::tree::Layers::interacts_with_any`]) last, and returns the top's split between
    /// the two groups when there are both. The inert proxies then fill a subtree of their
    /// own, which every search with a layer test skips at once; spread among the others (a
    /// floor under a level), they would share nearly every subtree and prune nothing.
    fn sort_for_build(&self, items: &mut [BuildItem<V>]) -> Option<usize> {
        let inert = |item: &BuildItem<V>| {
            item.node.is_leaf() && !self.layers(item.node.proxy()).interacts_with_any()
        };
        items.sort_unstable_by_key(|item| (inert(item), item.node));
        let active = items.iter().take_while(|item| !inert(item)).count();
        (active > 0 && active < items.len()).then_some(active)
    }

    /// Rebuilds the subtree under `top` with a binned SAH split over its nodes of height
    /// `keep_height` or less (kept whole and placed like leaves; 0 rebuilds down to the
    /// leaves), lays it out over the slots the old one held (see `tree::rebuild::layout`), then refits
    /// `top`'s ancestors, whose heights may change. Each new node carries the latest mark
    /// below it (see `refit_node`). Returns the number of items placed.
    ///
    /// With `still_for > 0`, subtrees whose mark is `still_for` updates old or more (no leaf
    /// below them moved since) are kept whole too, and the new top's first split puts these
    /// still items (those subtrees and still leaves) on one side and the others on the other,
    /// when there are both.
    ///
    /// Planned, then written (see `tree::rebuild::plan`): the new subtree takes back the old one's
    /// slots, so no node outside it moves and the optimizer's other candidates stay valid.
    pub(crate) fn rebuild_subtree(
        &mut self,
        top: NodeId,
        keep_height: u16,
        still_for: Stamp,
    ) -> usize {
        let mut plan = core::mem::take(&mut self.scratch.plan);
        self.plan_rebuild(top, keep_height, still_for, &mut plan);
        self.apply_rebuild(&plan);
        let items = plan.items.len();
        self.scratch.plan = plan;
        items
    }

    /// Builds a tree over `scratch.items` (at least one) at the root, the top split after the
    /// first `m` items when `first_split` is `Some(m)`. Top-down: each range of items is split
    /// in two by [`Self::split`] under a new internal node, a range of one item is that
    /// item's node; boxes, heights and marks are then refitted, children first.
    fn build_items(&mut self, scratch: &mut BuildScratch<V>, first_split: Option<usize>) {
        let count = scratch.items.len();
        debug_assert!(count > 0);
        scratch.keys.clear();
        scratch
            .keys
            .extend(scratch.items.iter().map(Self::sort_keys));
        scratch.internal.clear();
        scratch.tasks.clear();
        scratch.tasks.push((0, count as u32, NodeId::NULL, 0));
        while let Some((lo, hi, parent, slot)) = scratch.tasks.pop() {
            let (lo, hi, slot) = (lo as usize, hi as usize, slot as usize);
            if hi - lo == 1 {
                let item = scratch.items[lo];
                self.attach(parent, slot, item.node, item.aabb, item.stamp);
                continue;
            }
            let mid = match first_split {
                // The first range split is the whole set.
                Some(mid) if scratch.internal.is_empty() => mid,
                _ => {
                    let range = (&mut scratch.items[lo..hi], &mut scratch.keys[lo..hi]);
                    lo + Self::split(range, &mut scratch.bins)
                }
            };
            let id = self.allocate_node();
            scratch.internal.push(id);
            // Its box and mark are set by its refit, below.
            self.attach(parent, slot, id, BoundingBox::default(), 0);
            scratch.tasks.push((mid as u32, hi as u32, id, 1));
            scratch.tasks.push((lo as u32, mid as u32, id, 0));
        }
        for &id in scratch.internal.iter().rev() {
            self.refit_node(id);
        }
    }

    /// Reorders `items` in two parts and returns the size of the first, never 0 nor the
    /// whole range.
    ///
    /// Two orders are binned (one bin per item, up to [`BINS`]), and every boundary between
    /// bins of either is scored by `area(left) * count(left) + area(right) * count(right)`;
    /// the cheapest wins:
    /// - the centers along the axis where they spread most: splits space;
    /// - the items' areas (bins even in the logarithm of the area), when the largest is at
    ///   least eight times the smallest and there are [`SIZES_MIN_ITEMS`] items or more:
    ///   splits sizes. Where sizes vary widely, a few large boxes among many small ones widen
    ///   every node above them, and no cut through space sets them apart; here they go into
    ///   a subtree of their own near the top, met once by a walk rather than in every
    ///   subtree they would have widened. The larger items make the first part: a
    ///   closest-hit cast that starts inside both parts (both entered at 0) takes the
    ///   first, and a large box is the likelier to hold a hit near the start, which then
    ///   prunes the rest of the walk.
    ///
    /// Cases:
    /// - two items: one each;
    /// - neither order spreads (all centers equal, or not numbers, and areas within a factor
    ///   of eight or too few items), or every boundary of both leaves one side empty: cut in
    ///   half;
    /// - a tie between the two orders goes to the centers.
    pub(crate) fn split(
        (items, keys): (&mut [BuildItem<V>], &mut [[f32; 4]]),
        bins: &mut [Vec<u8>; 2],
    ) -> usize {
        let n = items.len();
        if n <= 2 {
            return n / 2;
        }
        // The bounds of the keys: the centers on each axis, and the size keys.
        let mut lo = Vec4::INFINITY;
        let mut hi = Vec4::NEG_INFINITY;
        for key in keys.iter() {
            let key = Vec4::from_array(*key);
            lo = lo.min(key);
            hi = hi.max(key);
        }
        let spread = hi - lo;
        let mut axis = 0;
        for a in 1..V::DIM {
            if spread[a] > spread[axis] {
                axis = a;
            }
        }
        // Sizes alike, or few items: no order by size.
        let sizes = if spread.w < SIZES_FROM || n < SIZES_MIN_ITEMS {
            0.0
        } else {
            spread.w
        };
        let count_bins = n.min(BINS);
        let [by_place, by_size] = bins;
        for order in [&mut *by_place, &mut *by_size] {
            if order.len() < n {
                order.resize(n, 0);
            }
        }
        let (by_place, by_size) = (&mut by_place[..n], &mut by_size[..n]);
        let (cost_c, bin_c) = Self::best_boundary(
            (items, keys),
            (axis, lo[axis], spread[axis]),
            count_bins,
            by_place,
        );
        let (cost_s, bin_s) =
            Self::best_boundary((items, keys), (3, lo.w, sizes), count_bins, by_size);
        if !cost_c.min(cost_s).is_finite() {
            return n / 2;
        }
        let (bins, best_bin) = if cost_s < cost_c {
            (by_size, bin_s)
        } else {
            (by_place, bin_c)
        };
        // Partition in place, bins <= best_bin first (two cursors closing in).
        let best_bin = best_bin as u8;
        let (mut i, mut j) = (0, n);
        loop {
            while i < j && bins[i] <= best_bin {
                i += 1;
            }
            while i < j && bins[j - 1] > best_bin {
                j -= 1;
            }
            if i >= j {
                break;
            }
            items.swap(i, j - 1);
            keys.swap(i, j - 1);
            bins.swap(i, j - 1);
        }
        if i == 0 || i == n { n / 2 } else { i }
    }

    /// What [`Self::split`] sorts an item by: its center doubled (`min + max`, zero on a
    /// missing third axis), and its [`Self::size_key`] last.
    pub(crate) fn sort_keys(item: &BuildItem<V>) -> [f32; 4] {
        let c = (item.aabb.min + item.aabb.max).extend_to_3d();
        [c.x, c.y, c.z, Self::size_key(item)]
    }

    /// An item's size as a number that orders like its area, largest first (the lowest
    /// key), and spreads like its logarithm: the bits of the (non-negative) area read as an
    /// integer (a float's exponent sits above its fraction, so the bits grow with the
    /// value), negated.
    #[inline(always)]
    fn size_key(item: &BuildItem<V>) -> f32 {
        // Flat boxes (area 0 or -0) count as the smallest positive area, so the keys' spread
        // stays that of the sizes (and `max` gives it for NaN, too).
        -(item.aabb.area().max(f32::MIN_POSITIVE).to_bits() as f32)
    }

    /// The cheapest boundary between bins of the items' keys in `lane` (from `origin`, over
    /// `extent`), and its cost: infinite when the keys do not spread or every boundary leaves
    /// a side empty. Writes each item's bin to `bins` (unless the keys do not spread).
    ///
    /// The items go into two sets of bins in turn, merged at the end: neighbouring items
    /// often fall into the same bin, and with one set each would wait for the previous one's
    /// write to that bin.
    fn best_boundary(
        (items, keys): (&[BuildItem<V>], &[[f32; 4]]),
        (lane, origin, extent): (usize, f32, f32),
        count_bins: usize,
        bins: &mut [u8],
    ) -> (f32, usize) {
        let n = items.len();
        if extent.is_nan() || extent <= 0.0 {
            return (f32::INFINITY, 0);
        }
        let scale = count_bins as f32 / extent;
        // Each bin's box as its `corners`: merging a box costs two instructions.
        let empty = (Vec4::INFINITY, Vec4::NEG_INFINITY);
        let mut bin_box = [[empty; BINS]; 2];
        let mut bin_count = [[0u32; BINS]; 2];
        for (k, ((item, key), slot)) in items.iter().zip(keys).zip(bins.iter_mut()).enumerate() {
            let b = bin(key[lane], origin, scale, count_bins);
            *slot = b as u8;
            bin_count[k & 1][b] += 1;
            let bin = &mut bin_box[k & 1][b];
            *bin = merged(*bin, corners(&item.aabb));
        }
        let [mut bin_box, odd_boxes] = bin_box;
        let [mut bin_count, odd_counts] = bin_count;
        for b in 0..count_bins {
            bin_box[b] = merged(bin_box[b], odd_boxes[b]);
            bin_count[b] += odd_counts[b];
        }
        // Right-to-left sweep: cost of the right side for each boundary.
        let mut right_cost = [0.0f32; BINS];
        let mut acc = empty;
        let mut count = 0;
        for b in (1..count_bins).rev() {
            acc = merged(acc, bin_box[b]);
            count += bin_count[b];
            right_cost[b] = if count > 0 {
                area::<V>(acc) * count as f32
            } else {
                0.0
            };
        }
        let mut best = (f32::INFINITY, 0);
        let mut acc = empty;
        let mut count = 0;
        for b in 0..count_bins - 1 {
            acc = merged(acc, bin_box[b]);
            count += bin_count[b];
            if count == 0 || count as usize == n {
                continue;
            }
            let cost = area::<V>(acc) * count as f32 + right_cost[b + 1];
            if cost < best.0 {
                best = (cost, b);
            }
        }
        best
    }
}

/// A box's corners as SIMD vectors, with a zero lane beyond the dimension.
#[inline(always)]
fn corners<V: Vector>(aabb: &BoundingBox<V>) -> (Vec4, Vec4) {
    (
        aabb.min.extend_to_3d().extend(0.0),
        aabb.max.extend_to_3d().extend(0.0),
    )
}

/// The box enclosing two boxes given by their corners: [`BoundingBox::merged`] on all
/// lanes at once (the same `min` and `max`, so the same outcome, NaN included).
#[inline(always)]
fn merged(a: (Vec4, Vec4), b: (Vec4, Vec4)) -> (Vec4, Vec4) {
    (a.0.min(b.0), a.1.max(b.1))
}

/// [`BoundingBox::area`] of a box given by its corners.
#[inline(always)]
fn area<V: Vector>((min, max): (Vec4, Vec4)) -> f32 {
    V::area_of_size(V::truncate_from_3d((max - min).truncate()))
}

/// The bin of `key` among `count_bins` bins of width `1 / scale` from `origin` (the last bin
/// takes the end of the range).
#[inline(always)]
fn bin(key: f32, origin: f32, scale: f32, count_bins: usize) -> usize {
    // Through i32: a cheaper conversion than to usize; the value is at least 0.
    (((key - origin) * scale) as i32).min(count_bins as i32 - 1) as usize
}
