//! How the pipeline names a collider: [`Key`], its tree and proxy id in one number, and
//! [`ByKey`], a table indexed by it. A file of its own, below the pair table and the
//! collision world that both use it.

use crate::tree::ProxyId;

/// A collider's place in the collision world: which tree holds it and its proxy id
/// there. Keys of the static tree have the top bit set, so keys of the two trees never
/// collide, and all moving keys sort before all static ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key(u32);

impl Key {
    const STATIC: u32 = 1 << 31;

    /// A proxy of the moving tree.
    #[inline]
    pub(crate) fn moving(id: ProxyId) -> Self {
        debug_assert!(id.0 < Self::STATIC);
        Self(id.0)
    }

    /// A proxy of the static tree.
    #[inline]
    pub(crate) fn fixed(id: ProxyId) -> Self {
        debug_assert!(id.0 < Self::STATIC);
        Self(id.0 | Self::STATIC)
    }

    /// Whether the static tree holds it.
    #[inline]
    pub(crate) fn is_static(self) -> bool {
        self.0 & Self::STATIC != 0
    }

    /// Its proxy id in its tree.
    #[inline]
    pub(crate) fn proxy(self) -> ProxyId {
        ProxyId(self.0 & !Self::STATIC)
    }
}

/// A table indexed by [`Key`]: one array per tree, by proxy id.
#[derive(Clone, Debug)]
pub(crate) struct ByKey<T> {
    moving: Vec<T>,
    fixed: Vec<T>,
}

impl<T> Default for ByKey<T> {
    fn default() -> Self {
        Self {
            moving: Vec::new(),
            fixed: Vec::new(),
        }
    }
}

impl<T: Clone> ByKey<T> {
    #[inline]
    fn side(&self, key: Key) -> &Vec<T> {
        if key.is_static() {
            &self.fixed
        } else {
            &self.moving
        }
    }

    #[inline]
    fn side_mut(&mut self, key: Key) -> &mut Vec<T> {
        if key.is_static() {
            &mut self.fixed
        } else {
            &mut self.moving
        }
    }

    /// The entry of `key`, if the table reaches it.
    #[inline]
    pub(crate) fn get(&self, key: Key) -> Option<&T> {
        self.side(key).get(key.proxy().index())
    }

    /// The entry of `key`, the table grown with `fill` to reach it.
    #[inline]
    pub(crate) fn get_or_grow(&mut self, key: Key, fill: T) -> &mut T {
        let side = self.side_mut(key);
        let i = key.proxy().index();
        if side.len() <= i {
            side.resize(i + 1, fill);
        }
        &mut side[i]
    }

    /// Every entry, both tables.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.moving.iter_mut().chain(&mut self.fixed)
    }

    /// Room for `moving` and `fixed` entries in all, reserved exactly.
    pub(crate) fn reserve_to(&mut self, moving: usize, fixed: usize) {
        self.moving
            .reserve_exact(moving.saturating_sub(self.moving.len()));
        self.fixed
            .reserve_exact(fixed.saturating_sub(self.fixed.len()));
    }

    /// Bytes of the two arrays, by capacity.
    pub(crate) fn bytes(&self) -> usize {
        (self.moving.capacity() + self.fixed.capacity()) * core::mem::size_of::<T>()
    }
}
