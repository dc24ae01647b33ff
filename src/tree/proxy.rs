//! Creating, moving and destroying one proxy, and the fat-box rule that decides when a
//! move touches the tree.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::{DynamicTree, Leaf, Link, MAX_PROXIES, NodeId, ProxyId, TreeError};

/// The outcome of a move's decision: the leaf's link and its new fat box when the move
/// changes it, `None` when it does not, or why it is refused.
pub(crate) type Decision<V> = Result<Option<(Link, BoundingBox<V>)>, TreeError>;

impl<V: Vector, T> DynamicTree<V, T> {
    /// The fat box the tree gives a proxy whose tight box is `tight` and which is expected
    /// to move by `displacement` before the next update: `tight` swept along `displacement`,
    /// then grown by the margin. What [`Self::move_proxy`] stores when a move needs a new fat
    /// box, and what [`Self::create_proxy_with`] starts with.
    #[inline]
    pub fn fatten(&self, tight: &BoundingBox<V>, displacement: V) -> BoundingBox<V> {
        tight.swept(displacement).grown(self.margin)
    }

    /// Adds a proxy for `tight` with `data`; its fat box is `tight` grown by the margin. The
    /// new proxy counts as moved: its pairs are reported by the next [`Self::update_pairs`].
    ///
    /// # Errors
    ///
    /// [`TreeError::InvalidBox`] for a box with a non-finite corner or `min > max` (or one
    /// whose fat box overflows `f32`), [`TreeError::Full`] when the tree holds 2³⁰ proxies.
    /// The tree is unchanged then.
    ///
    /// # Examples
    ///
    /// ```
    /// use bevy_aabb_tree::{BoundingBox, DynamicTree, Vec2};
    ///
    /// let mut tree: DynamicTree<Vec2, &str> = DynamicTree::new();
    /// let a = tree.create_proxy(BoundingBox::from_min_max(Vec2::ZERO, Vec2::ONE), "a")?;
    /// let b = tree.create_proxy(BoundingBox::from_min_max(Vec2::splat(0.5), Vec2::splat(2.0)), "b")?;
    /// let mut pairs = Vec::new();
    /// tree.update_pairs(&mut pairs);
    /// assert_eq!(pairs.len(), 1);
    /// assert!(tree.create_proxy(BoundingBox::from_min_max(Vec2::ONE, Vec2::ZERO), "c").is_err());
    /// # let _ = (a, b);
    /// # Ok::<(), bevy_aabb_tree::TreeError>(())
    /// ```
    pub fn create_proxy(&mut self, tight: BoundingBox<V>, data: T) -> Result<ProxyId, TreeError> {
        self.create_proxy_with(tight, V::ZERO, data)
    }

    /// [`Self::create_proxy`] for a proxy expected to move by `displacement` before the next
    /// update: its fat box is [`Self::fatten`]`(tight, displacement)`, as a move would give it,
    /// so that a fast new proxy's first moves need not touch the tree.
    ///
    /// # Errors
    ///
    /// As [`Self::create_proxy`], and [`TreeError::InvalidValue`] for a non-finite
    /// `displacement`.
    pub fn create_proxy_with(
        &mut self,
        tight: BoundingBox<V>,
        displacement: V,
        data: T,
    ) -> Result<ProxyId, TreeError> {
        if !tight.is_valid() {
            return Err(TreeError::InvalidBox);
        }
        if !displacement.is_finite() {
            return Err(TreeError::InvalidValue);
        }
        let fat = self.fatten(&tight, displacement);
        if !fat.is_valid() {
            return Err(TreeError::InvalidBox);
        }
        if !self.has_room(1) {
            return Err(TreeError::Full);
        }
        let proxy = self.allocate_proxy(fat, data);
        let leaf = NodeId::leaf(proxy);
        self.insert_leaf(leaf, fat);
        self.mark_moved(leaf);
        Ok(proxy)
    }

    /// Marks a proxy moved without changing its fat box: the next [`Self::update_pairs`]
    /// reports its pairs again, as after a move. For a change the tree does not see, such as
    /// a change of which pairs the caller keeps (its layers, say).
    ///
    /// # Errors
    ///
    /// [`TreeError::UnknownProxy`] when `id` names no live proxy.
    pub fn touch_proxy(&mut self, id: ProxyId) -> Result<(), TreeError> {
        if self.live_leaf(id).is_none() {
            return Err(TreeError::UnknownProxy(id));
        }
        self.mark_moved(NodeId::leaf(id));
        Ok(())
    }

    /// Removes a proxy and returns its payload.
    ///
    /// # Errors
    ///
    /// [`TreeError::UnknownProxy`] when `id` names no live proxy (never created, or destroyed
    /// already); the tree is unchanged then.
    pub fn destroy_proxy(&mut self, id: ProxyId) -> Result<T, TreeError> {
        if self.live_leaf(id).is_none() {
            return Err(TreeError::UnknownProxy(id));
        }
        let leaf = NodeId::leaf(id);
        debug_assert!(
            self.is_linked(id),
            "{id:?} has an id but no place in the tree"
        );
        if self.slot_stamp(self.link_of(leaf)) == self.epoch {
            self.moved_count -= 1;
        }
        self.remove_leaf(leaf);
        self.forget_layers(id);
        self.proxy_count -= 1;
        self.leaves[id.index()] = Leaf::FREE;
        self.free_proxies.push(id.0);
        self.data[id.index()]
            .take()
            .ok_or(TreeError::UnknownProxy(id))
    }

    /// Moves a proxy: `tight` is its new tight box, `displacement` how far it is expected to
    /// move before the next update (velocity × step × any safety factor).
    ///
    /// Returns `Ok(true)` when the tight box left the fat box (or the fat box had grown far
    /// larger than needed): the leaf got a new fat box and counts as moved. Returns `Ok(false)`
    /// when the fat box still encloses the tight box: nothing was touched.
    ///
    /// # Errors
    ///
    /// [`TreeError::UnknownProxy`] for an id that names no live proxy, [`TreeError::InvalidBox`]
    /// for an invalid box (or one whose fat box overflows), [`TreeError::InvalidValue`] for a
    /// non-finite displacement. The tree is unchanged then.
    pub fn move_proxy(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Result<bool, TreeError> {
        let fat = self.new_fat_box(id, tight, displacement)?;
        if let Some((link, fat)) = fat {
            self.set_leaf_box(link, fat);
        }
        Ok(fat.is_some())
    }

    /// [`Self::decide_fat_box`], storing a new fat box ([`Self::store_fat_box`]) for the caller
    /// to finish with [`Self::set_leaf_box`].
    #[inline(always)]
    pub(crate) fn new_fat_box(
        &mut self,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Decision<V> {
        let change = self.decide_fat_box(id, tight, displacement)?;
        if let Some((link, fat)) = change {
            self.store_fat_box(id, link, fat);
        }
        Ok(change)
    }

    /// The checks and [`Decision`] of a move, against the proxy's stored fat box.
    #[inline(always)]
    pub(crate) fn decide_fat_box(
        &self,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Decision<V> {
        let leaf = *self.live_leaf(id).ok_or(TreeError::UnknownProxy(id))?;
        let old = self.stored_fat_box(id, leaf);
        Ok(self
            .decide_from(&old, tight, displacement)?
            .map(|fat| (leaf.parent, fat)))
    }

    /// [`Self::decide_fat_box`] for proxy `id` whose fat box lies in `boxes` (the move cache
    /// from proxy `base` on), storing a new box there; `None`, deciding nothing, when the
    /// proxy is live but its box lies outside `boxes`.
    #[inline(always)]
    pub(crate) fn decide_in_run(
        &self,
        boxes: &mut [BoundingBox<V>],
        base: usize,
        id: ProxyId,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Option<Decision<V>> {
        let Some(leaf) = self.live_leaf(id) else {
            return Some(Err(TreeError::UnknownProxy(id)));
        };
        let old = boxes.get_mut(id.index().checked_sub(base)?)?;
        Some(self.decide_from(old, tight, displacement).map(|fat| {
            fat.map(|fat| {
                *old = fat;
                (leaf.parent, fat)
            })
        }))
    }

    /// The decision of a move of a live proxy whose fat box is `old`: the new fat box, if any.
    #[inline(always)]
    pub(crate) fn decide_from(
        &self,
        old: &BoundingBox<V>,
        tight: BoundingBox<V>,
        displacement: V,
    ) -> Result<Option<BoundingBox<V>>, TreeError> {
        // Most calls change nothing, so the checks of the common path make every comparison
        // and combine them with `&`: no branch on the data until the verdict.
        if !(tight.is_valid() & displacement.abs().all_lt(V::INFINITY)) {
            return Err(if tight.is_valid() {
                TreeError::InvalidValue
            } else {
                TreeError::InvalidBox
            });
        }
        // The first half of `keeps_fat_box`: the common case keeps its fat box without
        // computing the new one.
        if old.contains(&tight) && Self::small_enough(old, &tight) {
            return Ok(None);
        }
        let fat = self.fatten(&tight, displacement);
        if Self::keeps_fat_box(old, &tight, &fat) {
            return Ok(None);
        }
        if !fat.is_valid() {
            return Err(TreeError::InvalidBox);
        }
        Ok(Some(fat))
    }

    /// Whether a move keeps the proxy's fat box `old`, touching nothing: the new tight box
    /// `tight` lies inside it, and it is at most four times the area of `fat`, the fat box the
    /// move would give; a fat box far larger than needed (a fast proxy that slowed down) would
    /// report stale pairs forever. The rule of [`Self::move_proxy`].
    ///
    /// The area is tested against `tight` first, `fat` only when that fails: a fat box is never
    /// smaller than its tight box on any axis, so the outcome is the same (short of an area
    /// that overflows to infinity times zero), and most moves need no new fat box.
    #[inline(always)]
    fn keeps_fat_box(old: &BoundingBox<V>, tight: &BoundingBox<V>, fat: &BoundingBox<V>) -> bool {
        old.contains(tight) && (Self::small_enough(old, tight) || Self::small_enough(old, fat))
    }

    /// Whether `old` is at most four times the area of `new`.
    #[inline(always)]
    fn small_enough(old: &BoundingBox<V>, new: &BoundingBox<V>) -> bool {
        old.area() <= 4.0 * new.area()
    }

    /// Whether live proxy `id` is in the tree: not one of a bulk insertion given an id and
    /// not linked yet, whose leaf names the root as its place without being it.
    pub(crate) fn is_linked(&self, id: ProxyId) -> bool {
        self.leaves[id.index()].parent != Link::ROOT || self.root == NodeId::leaf(id)
    }

    /// Whether `count` more proxies fit ([`MAX_PROXIES`] ids at most, freed ones reused).
    #[inline]
    pub(crate) fn has_room(&self, count: usize) -> bool {
        self.leaves.len() + count.saturating_sub(self.free_proxies.len()) <= MAX_PROXIES as usize
    }

    /// Gives a new leaf with fat box `fat` a proxy id (the last one freed, or a new one) and
    /// its payload, not linked into the tree yet. The caller checks [`Self::has_room`] first.
    pub(crate) fn allocate_proxy(&mut self, fat: BoundingBox<V>, data: T) -> ProxyId {
        let id = match self.free_proxies.pop() {
            Some(id) => id,
            None => {
                self.leaves.push(Leaf::FREE);
                self.data.push(None);
                if self.move_cache {
                    self.fat_boxes.push(fat);
                }
                (self.leaves.len() - 1) as u32
            }
        };
        self.leaves[id as usize] = Leaf { parent: Link::ROOT };
        if self.move_cache {
            self.fat_boxes[id as usize] = fat;
        }
        self.data[id as usize] = Some(data);
        self.proxy_count += 1;
        ProxyId(id)
    }

    /// The fat box that moves of proxy `id` decide against: the move cache's copy, or, with
    /// the cache off, the box in the parent's slot.
    #[inline(always)]
    pub(crate) fn stored_fat_box(&self, id: ProxyId, leaf: Leaf) -> BoundingBox<V> {
        if self.move_cache {
            self.fat_boxes[id.index()]
        } else {
            *self.slot_box(leaf.parent)
        }
    }

    /// Stores a proxy's new fat box where [`Self::stored_fat_box`] reads it (with the cache
    /// off, in the slot at `link`, marked moved), so that a later move in the same batch
    /// decides against it. The slot (with the cache) and the ancestors are then updated by
    /// [`Self::set_leaf_box`] or a batch's [`Self::apply_pending`]. Counts the change for the
    /// optimizer.
    #[inline(always)]
    pub(crate) fn store_fat_box(&mut self, id: ProxyId, link: Link, fat: BoundingBox<V>) {
        if self.move_cache {
            self.fat_boxes[id.index()] = fat;
        } else {
            self.write_slot(link, fat);
        }
        self.optimizer.changes += 1;
    }
}
