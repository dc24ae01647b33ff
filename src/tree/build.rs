//! Building a whole tree at once (binned SAH).

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, NodeId, ProxyId, TreeError};

const BINS: usize = 16;

impl<V: Vector, T> DynamicTree<V, T> {
    /// Adds many proxies at once and rebuilds the whole tree top-down, which is faster
    /// than inserting them one by one and gives a better tree. Fat boxes are the tight
    /// boxes grown by the margin. New proxies count as moved.
    ///
    /// Nothing is added when any box is invalid (the error names none of them; check with
    /// [`BoundingBox::is_valid`] first to find which).
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
        let mut ids = Vec::with_capacity(items.len());
        for (tight, data) in items {
            let leaf = self.allocate_node();
            let fat = self.fatten(&tight, V::ZERO);
            self.nodes[leaf.index()].aabb = fat;
            self.data[leaf.index()] = Some(data);
            self.proxy_count += 1;
            // Not linked yet: `rebuild` links every leaf.
            self.nodes[leaf.index()].parent = NodeId::NULL;
            ids.push(ProxyId(leaf.0));
        }
        self.rebuild_with_extra(&ids);
        for id in &ids {
            self.mark_moved(id.node());
        }
        Ok(ids)
    }

    /// Rebuilds the whole tree from its leaves with a binned SAH split. Proxy ids, fat
    /// boxes and moved marks are kept.
    pub fn rebuild(&mut self) {
        self.rebuild_with_extra(&[]);
    }

    fn rebuild_with_extra(&mut self, unlinked: &[ProxyId]) {
        // Collect the linked leaves and free every internal node.
        let mut leaves: Vec<NodeId> = Vec::with_capacity(self.proxy_count);
        if !self.root.is_null() {
            let mut stack = vec![self.root];
            while let Some(id) = stack.pop() {
                let node = self.nodes[id.index()];
                if node.is_leaf() {
                    leaves.push(id);
                } else {
                    stack.push(node.child2);
                    stack.push(node.child1);
                    self.free_node(id);
                }
            }
        }
        leaves.extend(unlinked.iter().map(|id| id.node()));
        // Keep the result independent of the order leaves were found in.
        leaves.sort_unstable();
        self.root = NodeId::NULL;
        if leaves.is_empty() {
            return;
        }
        let centers: Vec<V> = leaves
            .iter()
            .map(|id| self.nodes[id.index()].aabb.center())
            .collect();
        let mut order: Vec<u32> = (0..leaves.len() as u32).collect();
        let mut internal: Vec<NodeId> = Vec::with_capacity(leaves.len());

        // Tasks: (range start, range end, parent, is first child).
        let mut tasks: Vec<(usize, usize, NodeId, bool)> = vec![(0, leaves.len(), NodeId::NULL, true)];
        while let Some((lo, hi, parent, first)) = tasks.pop() {
            let id = if hi - lo == 1 {
                leaves[order[lo] as usize]
            } else {
                let mid = self.split(&leaves, &centers, &mut order[lo..hi]) + lo;
                let id = self.allocate_node();
                internal.push(id);
                tasks.push((mid, hi, id, false));
                tasks.push((lo, mid, id, true));
                id
            };
            self.nodes[id.index()].parent = parent;
            if parent.is_null() {
                self.root = id;
            } else if first {
                self.nodes[parent.index()].child1 = id;
            } else {
                self.nodes[parent.index()].child2 = id;
            }
        }
        // Children were created after their parents: refit in reverse.
        for &id in internal.iter().rev() {
            self.refit_node(id);
        }
    }

    /// Partitions `order` (indices into `leaves`) in two and returns the size of the first
    /// part, which is never 0 or the whole range.
    ///
    /// Centers are binned along the axis where they spread most; every boundary between
    /// bins is scored by `area(left) * count(left) + area(right) * count(right)` and the
    /// cheapest wins. When all centers coincide, or the best boundary leaves one side
    /// empty, the range is cut in half.
    fn split(&self, leaves: &[NodeId], centers: &[V], order: &mut [u32]) -> usize {
        let n = order.len();
        let bounds = BoundingBox::from_points(order.iter().map(|&i| centers[i as usize]));
        let size = bounds.size();
        let mut axis = 0;
        for a in 1..V::DIM {
            if size.axis(a) > size.axis(axis) {
                axis = a;
            }
        }
        let extent = size.axis(axis);
        if extent.is_nan() || extent <= 0.0 || n <= 2 {
            return n / 2;
        }
        let lo = bounds.min.axis(axis);
        let scale = BINS as f32 / extent;
        let bin_of = |c: V| (((c.axis(axis) - lo) * scale) as usize).min(BINS - 1);
        let empty = BoundingBox::from_min_max(V::INFINITY, V::NEG_INFINITY);
        let mut bin_box = [empty; BINS];
        let mut bin_count = [0usize; BINS];
        for &i in order.iter() {
            let b = bin_of(centers[i as usize]);
            bin_count[b] += 1;
            bin_box[b].merge(&self.nodes[leaves[i as usize].index()].aabb);
        }
        // Right-to-left sweep: cost of the right side for each boundary.
        let mut right_cost = [0.0f32; BINS];
        let mut acc = empty;
        let mut count = 0;
        for b in (1..BINS).rev() {
            acc.merge(&bin_box[b]);
            count += bin_count[b];
            right_cost[b] = if count > 0 { acc.area() * count as f32 } else { 0.0 };
        }
        let mut best_cost = f32::INFINITY;
        let mut best_bin = 0;
        let mut acc = empty;
        let mut count = 0;
        for b in 0..BINS - 1 {
            acc.merge(&bin_box[b]);
            count += bin_count[b];
            if count == 0 || count == n {
                continue;
            }
            let cost = acc.area() * count as f32 + right_cost[b + 1];
            if cost < best_cost {
                best_cost = cost;
                best_bin = b;
            }
        }
        if !best_cost.is_finite() {
            return n / 2;
        }
        // Partition in place: bins <= best_bin first.
        let mut left = 0;
        for k in 0..n {
            if bin_of(centers[order[k] as usize]) <= best_bin {
                order.swap(left, k);
                left += 1;
            }
        }
        if left == 0 || left == n { n / 2 } else { left }
    }
}
