//! The pair table: every candidate pair (fat boxes overlapping, layers matching) with
//! whether it touches, and each collider's list of its own pairs.

use crate::plugin::key::{ByKey, Key};

/// A candidate pair: fat boxes overlapping, layers matching.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair {
    pub a: Key,
    pub b: Key,
    pub touching: bool,
    /// The game's [`PairFilter`](crate::plugin::PairFilter) vetoes it: it never touches.
    pub vetoed: bool,
}

impl Pair {
    /// A pair not touching yet.
    pub(crate) fn new(a: Key, b: Key) -> Self {
        Self {
            a,
            b,
            touching: false,
            vetoed: false,
        }
    }

    /// Which of the pair's two lists is `key`'s: 0 for `a`, 1 for `b`.
    #[inline]
    pub(crate) fn side(&self, key: Key) -> usize {
        debug_assert!(self.a == key || self.b == key, "{key:?} not in {self:?}");
        usize::from(self.a != key)
    }

    /// The collider on the other end from `key`.
    #[inline]
    pub(crate) fn other(&self, key: Key) -> Key {
        if self.a == key { self.b } else { self.a }
    }
}

/// "No pair" in the per-collider lists.
const NO_PAIR: u32 = u32::MAX;

/// A pair's place in the list of its `a` (`[0]`) and of its `b` (`[1]`): the previous and
/// the next pair's slot, [`NO_PAIR`] at either end.
type PairLinks = [[u32; 2]; 2];

/// The candidate pairs, in slots, with a doubly linked list of pairs per collider.
///
/// Removing a collider visits its own pairs only, so a level's worth of colliders
/// despawned at once costs what their pairs cost, not colliders × pairs; whether a pair
/// is tracked is a walk of the shorter of two lists (no hashing). Removing a pair moves
/// the last pair into its slot.
///
/// Each slot may also hold a copy `C` of what the narrow phase reads of one of the pair's
/// colliders (the plugin copies a static collider's side): a pass over a crowd's pairs
/// with a large level then reads the copies, in slot order, rather than the level's
/// scattered records. The table keeps copies in step with the slots and drops a pair's
/// copy only when told ([`Self::forget_copies_of`]); a new pair has none. The copies'
/// array stays empty until the first copy is stored, so tables that never store one pay
/// nothing for it.
#[derive(Clone)]
pub(crate) struct PairTable<C: Copy = ()> {
    pairs: Vec<Pair>,
    /// Each pair's links, by slot (beside `pairs` so that a pass over the pairs reads
    /// small records).
    links: Vec<PairLinks>,
    /// Each pair's copy, by slot: empty, or as long as `pairs`.
    copies: Vec<Option<C>>,
    /// Each collider's first pair (a slot, or [`NO_PAIR`]).
    first: ByKey<u32>,
    /// Pairs whose `touching` is set.
    touching: usize,
}

impl<C: Copy> Default for PairTable<C> {
    fn default() -> Self {
        Self {
            pairs: Vec::new(),
            links: Vec::new(),
            copies: Vec::new(),
            first: ByKey::default(),
            touching: 0,
        }
    }
}

impl<C: Copy> PairTable<C> {
    /// Number of pairs.
    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Number of touching pairs.
    pub(crate) fn touching_count(&self) -> usize {
        self.touching
    }

    /// The pair in slot `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Pair {
        self.pairs[i]
    }

    /// Every pair, by slot.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Pair> + '_ {
        self.pairs.iter()
    }

    /// Every pair's copy that is stored.
    pub(crate) fn copies_mut(&mut self) -> impl Iterator<Item = &mut C> + '_ {
        self.copies.iter_mut().flatten()
    }

    /// Sets whether the pair in slot `i` touches.
    #[inline]
    pub(crate) fn set_touching(&mut self, i: usize, touching: bool) {
        let pair = &mut self.pairs[i];
        if pair.touching != touching {
            pair.touching = touching;
            if touching {
                self.touching += 1;
            } else {
                self.touching -= 1;
            }
        }
    }

    /// Sets whether the game vetoes the pair in slot `i`; returns whether that changed.
    #[inline]
    pub(crate) fn set_vetoed(&mut self, i: usize, vetoed: bool) -> bool {
        let pair = &mut self.pairs[i];
        let changed = pair.vetoed != vetoed;
        pair.vetoed = vetoed;
        changed
    }

    /// The slot of `key`'s first pair, if it has any.
    #[inline]
    pub(crate) fn first_of(&self, key: Key) -> Option<usize> {
        let i = self.first.get(key).copied().unwrap_or(NO_PAIR);
        (i != NO_PAIR).then_some(i as usize)
    }

    /// The slot of the pair after slot `i` in `key`'s list.
    #[inline]
    pub(crate) fn next_of(&self, i: usize, key: Key) -> Option<usize> {
        let next = self.links[i][self.pairs[i].side(key)][1];
        (next != NO_PAIR).then_some(next as usize)
    }

    /// Gives the list heads room for every key up to the given counts, so that a bulk
    /// spawn grows them once.
    pub(crate) fn reserve_keys(&mut self, moving: usize, fixed: usize) {
        self.first.reserve_to(moving, fixed);
    }

    /// Bytes of the table's arrays, by capacity.
    pub(crate) fn bytes(&self) -> usize {
        use core::mem::size_of;
        self.pairs.capacity() * size_of::<Pair>()
            + self.links.capacity() * size_of::<PairLinks>()
            + self.copies.capacity() * size_of::<Option<C>>()
            + self.first.bytes()
    }

    /// The copy stored with the pair in slot `i`, if any.
    #[inline]
    pub(crate) fn copy(&self, i: usize) -> Option<C> {
        self.copies.get(i).copied().flatten()
    }

    /// Stores a copy with the pair in slot `i`.
    #[inline]
    pub(crate) fn set_copy(&mut self, i: usize, copy: C) {
        if self.copies.is_empty() {
            self.copies.resize(self.pairs.len(), None);
        }
        self.copies[i] = Some(copy);
    }

    /// Drops the copies stored with `key`'s pairs (the collider they copy changed).
    /// Visits `key`'s pairs only.
    pub(crate) fn forget_copies_of(&mut self, key: Key) {
        if self.copies.is_empty() {
            return;
        }
        let mut next = self.first_of(key);
        while let Some(i) = next {
            self.copies[i] = None;
            next = self.next_of(i, key);
        }
    }

    /// Whether a pair of `a` and `b` is tracked. Their two lists are walked side by side
    /// (the pair is in both), so this costs the shorter list: a box touching thousands
    /// costs nothing more to its small partners.
    pub(crate) fn contains(&self, a: Key, b: Key) -> bool {
        let (mut i, mut j) = (self.first_of(a), self.first_of(b));
        while let (Some(x), Some(y)) = (i, j) {
            if self.pairs[x].other(a) == b || self.pairs[y].other(b) == a {
                return true;
            }
            i = self.next_of(x, a);
            j = self.next_of(y, b);
        }
        false
    }

    /// Appends a pair without linking it; [`Self::link_from`] links it. The broad phase
    /// pushes a tick's new pairs, sorts them, then links them.
    pub(crate) fn push_unlinked(&mut self, pair: Pair) {
        if pair.touching {
            self.touching += 1;
        }
        self.pairs.push(pair);
        if !self.copies.is_empty() {
            self.copies.push(None);
        }
    }

    /// The unlinked pairs from slot `first` on, to sort before linking (none has a copy,
    /// so that reordering them leaves the copies right).
    pub(crate) fn unlinked_mut(&mut self, first: usize) -> &mut [Pair] {
        debug_assert!(self.copies.iter().skip(first).all(Option::is_none));
        &mut self.pairs[first..]
    }

    /// Links every pair from slot `first` on at the head of its two colliders' lists.
    pub(crate) fn link_from(&mut self, first: usize) {
        for i in first..self.pairs.len() {
            self.link(i);
        }
    }

    /// Puts the pair in slot `i` at the head of its two colliders' lists.
    fn link(&mut self, i: usize) {
        let pair = self.pairs[i];
        if self.links.len() <= i {
            self.links.resize(i + 1, [[NO_PAIR; 2]; 2]);
        }
        for (side, key) in [(0, pair.a), (1, pair.b)] {
            let head = *self.first.get_or_grow(key, NO_PAIR);
            self.links[i][side] = [NO_PAIR, head];
            if head != NO_PAIR {
                let next_side = self.pairs[head as usize].side(key);
                self.links[head as usize][next_side][0] = i as u32;
            }
            *self.first.get_or_grow(key, NO_PAIR) = i as u32;
        }
    }

    /// Points the neighbours of the pair in slot `i` (and the list heads) at `to`: with
    /// `to == NO_PAIR` its neighbours skip it (unlinked); otherwise it now lives in slot
    /// `to`.
    fn relink(&mut self, i: usize, to: u32) {
        let pair = self.pairs[i];
        let links = self.links[i];
        for (side, key) in [(0, pair.a), (1, pair.b)] {
            let [prev, next] = links[side];
            // Unlinking: the neighbours point at each other; moving: at the new slot.
            let (to_prev, to_next) = if to == NO_PAIR {
                (next, prev)
            } else {
                (to, to)
            };
            if prev == NO_PAIR {
                *self.first.get_or_grow(key, NO_PAIR) = to_prev;
            } else {
                let s = self.pairs[prev as usize].side(key);
                self.links[prev as usize][s][1] = to_prev;
            }
            if next != NO_PAIR {
                let s = self.pairs[next as usize].side(key);
                self.links[next as usize][s][0] = to_next;
            }
        }
    }

    /// Drops the pair in slot `i` and returns it; the last pair takes its slot.
    pub(crate) fn remove_at(&mut self, i: usize) -> Pair {
        self.relink(i, NO_PAIR);
        let last = self.pairs.len() - 1;
        if i != last {
            self.relink(last, i as u32);
        }
        self.links.swap_remove(i);
        if !self.copies.is_empty() {
            self.copies.swap_remove(i);
        }
        let pair = self.pairs.swap_remove(i);
        if pair.touching {
            self.touching -= 1;
        }
        pair
    }

    /// Drops every pair of `key`, handing each to `f` first. Visits `key`'s pairs only.
    pub(crate) fn remove_all_of(&mut self, key: Key, mut f: impl FnMut(Pair)) {
        while let Some(i) = self.first_of(key) {
            f(self.remove_at(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::ProxyId;

    const KEYS: u32 = 24;

    /// Keys of both trees: the even ones moving, the odd ones static.
    fn key(n: u32) -> Key {
        if n.is_multiple_of(2) {
            Key::moving(ProxyId(n / 2))
        } else {
            Key::fixed(ProxyId(n / 2))
        }
    }

    /// Every key's list holds exactly the pairs that name it, each once, with matching
    /// back links; `contains` and the touching count agree with a scan of the pairs.
    fn check_lists(table: &PairTable<(Key, Key)>) {
        for k in (0..KEYS).map(key) {
            let mut expected: Vec<usize> = (0..table.len())
                .filter(|&i| table.get(i).a == k || table.get(i).b == k)
                .collect();
            let mut seen = Vec::new();
            let mut prev = NO_PAIR;
            let mut i = table.first_of(k);
            while let Some(slot) = i {
                assert!(seen.len() <= table.len(), "a cycle in {k:?}'s list");
                let side = table.get(slot).side(k);
                assert_eq!(table.links[slot][side][0], prev, "back link of slot {slot}");
                seen.push(slot);
                prev = slot as u32;
                i = table.next_of(slot, k);
            }
            seen.sort_unstable();
            expected.sort_unstable();
            assert_eq!(seen, expected, "the list of {k:?}");
        }
        assert_eq!(table.links.len(), table.len());
        for a in (0..KEYS).map(key) {
            for b in (0..KEYS).map(key) {
                let tracked = table
                    .iter()
                    .any(|p| (p.a, p.b) == (a, b) || (p.a, p.b) == (b, a));
                assert_eq!(table.contains(a, b), tracked, "{a:?} {b:?}");
            }
        }
        assert_eq!(
            table.touching_count(),
            table.iter().filter(|p| p.touching).count()
        );
    }

    /// Every stored copy is the one stored for its pair (copies move with their pairs),
    /// and exactly the pairs of `copied` have one.
    fn check_copies(table: &PairTable<(Key, Key)>, copied: &[(Key, Key)]) {
        for (i, p) in table.iter().enumerate() {
            let expected = copied.contains(&(p.a, p.b)).then_some((p.a, p.b));
            assert_eq!(table.copy(i), expected, "slot {i}");
        }
    }

    /// Random pairs added, touched, given copies, dropped, keys removed and copies
    /// forgotten, against a brute-force scan of the pairs: the lists stay exact, removing
    /// a key hands over exactly its pairs, and copies stay with their pairs.
    #[test]
    fn pair_lists_follow_every_change() {
        let mut table = PairTable::<(Key, Key)>::default();
        // The pairs that have a copy, kept apart from the table.
        let mut copied: Vec<(Key, Key)> = Vec::new();
        let mut most_copied = 0;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 33) as u32 % n
        };
        let mut removed_keys = 0;
        for step in 0..4000 {
            match next(12) {
                0..=5 => {
                    // Up to four new pairs pushed, sorted, then linked, as the broad
                    // phase adds them.
                    let first = table.len();
                    for _ in 0..1 + next(4) {
                        let (a, b) = (key(next(KEYS)), key(next(KEYS)));
                        let known = table
                            .iter()
                            .any(|p| (p.a, p.b) == (a, b) || (p.a, p.b) == (b, a));
                        if a == b || known {
                            continue;
                        }
                        let mut pair = Pair::new(a, b);
                        pair.touching = next(2) == 0;
                        table.push_unlinked(pair);
                    }
                    table
                        .unlinked_mut(first)
                        .sort_unstable_by_key(|p| (p.a, p.b));
                    table.link_from(first);
                }
                6 if table.len() > 0 => {
                    let i = next(table.len() as u32) as usize;
                    table.set_touching(i, next(2) == 0);
                }
                7 if table.len() > 0 => {
                    // After a few hundred steps without copies (the array is still
                    // empty), copies come and go.
                    if step > 300 && next(4) != 0 {
                        let i = next(table.len() as u32) as usize;
                        let p = table.get(i);
                        table.set_copy(i, (p.a, p.b));
                        if !copied.contains(&(p.a, p.b)) {
                            copied.push((p.a, p.b));
                        }
                    } else {
                        let k = key(next(KEYS));
                        table.forget_copies_of(k);
                        copied.retain(|&(a, b)| a != k && b != k);
                    }
                }
                8..=10 if table.len() > 0 => {
                    let i = next(table.len() as u32) as usize;
                    let expected = table.get(i);
                    let removed = table.remove_at(i);
                    assert_eq!((removed.a, removed.b), (expected.a, expected.b));
                    copied.retain(|&c| c != (removed.a, removed.b));
                }
                _ => {
                    let k = key(next(KEYS));
                    let mut expected: Vec<(Key, Key)> = table
                        .iter()
                        .filter(|p| p.a == k || p.b == k)
                        .map(|p| (p.a, p.b))
                        .collect();
                    let mut handed = Vec::new();
                    table.remove_all_of(k, |p| handed.push((p.a, p.b)));
                    expected.sort_unstable();
                    handed.sort_unstable();
                    assert_eq!(handed, expected, "step {step}");
                    assert!(table.iter().all(|p| p.a != k && p.b != k));
                    copied.retain(|&(a, b)| a != k && b != k);
                    removed_keys += 1;
                }
            }
            check_lists(&table);
            check_copies(&table, &copied);
            most_copied = most_copied.max(copied.len());
        }
        assert!(removed_keys > 100 && table.len() > 10);
        assert!(most_copied > 10, "at most {most_copied} copies at once");
    }
}
