//! The grid of solid cells and its cover by rectangles, without Bevy: the greedy merge of a
//! whole grid, and the local re-merge after a cell changes.
//!
//! Invariant, kept by every method: every solid cell is covered by exactly one rectangle,
//! no empty cell is covered, and no rectangle is larger than the grid's `max_size` on
//! either axis.

use glam::{IVec2, UVec2, Vec2};

/// No rectangle covers the cell.
const NONE: u32 = u32::MAX;

/// A rectangle of cells, both corners included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CellRect {
    /// The bottom-left cell.
    pub min: UVec2,
    /// The top-right cell.
    pub max: UVec2,
}

/// The rectangles a change took out and put in, by slot (see [`TileGrid::rect`]). A slot
/// can appear in both: it was freed, then reused.
#[derive(Default, Debug)]
pub(crate) struct GridChange {
    /// Slots whose rectangle is gone, in the order they were freed.
    pub removed: Vec<u32>,
    /// Slots holding a new rectangle.
    pub added: Vec<u32>,
}

impl GridChange {
    /// Empties both lists, keeping their memory.
    pub(crate) fn clear(&mut self) {
        self.removed.clear();
        self.added.clear();
    }
}

/// A `width × height` grid of cells, solid or empty, and the rectangles covering its
/// solid cells.
#[derive(Debug, Default)]
pub(crate) struct TileGrid {
    width: u32,
    height: u32,
    max_size: UVec2,
    solid: Vec<bool>,
    /// The slot of the rectangle covering each cell, or `NONE`.
    cover: Vec<u32>,
    rects: Vec<Option<CellRect>>,
    free: Vec<u32>,
    /// Cells to merge, reused between changes.
    seeds: Vec<(u32, u32)>,
}

impl TileGrid {
    /// The grid with `solid(x, y)` for each cell, covered by the greedy merge: rows from
    /// the bottom, each free solid cell grows a run to the right, then the run grows up
    /// while the whole row above it is free and solid. Rectangles are at most `max_size`
    /// cells on each axis (at least 1).
    pub(crate) fn build(
        width: u32,
        height: u32,
        max_size: UVec2,
        mut solid: impl FnMut(u32, u32) -> bool,
        change: &mut GridChange,
    ) -> Self {
        let cells = width as usize * height as usize;
        let mut grid = Self {
            width,
            height,
            max_size: max_size.max(UVec2::ONE),
            solid: Vec::with_capacity(cells),
            cover: vec![NONE; cells],
            ..Self::default()
        };
        for y in 0..height {
            for x in 0..width {
                grid.solid.push(solid(x, y));
            }
        }
        for y in 0..height {
            for x in 0..width {
                if grid.is_free(x, y) {
                    let slot = grid.grow(x, y);
                    change.added.push(slot);
                }
            }
        }
        grid
    }

    /// The grid's size in cells.
    pub(crate) fn size(&self) -> UVec2 {
        UVec2::new(self.width, self.height)
    }

    fn index(&self, x: u32, y: u32) -> usize {
        y as usize * self.width as usize + x as usize
    }

    /// Solid and not covered yet: a cell a merge may take.
    fn is_free(&self, x: u32, y: u32) -> bool {
        let i = self.index(x, y);
        self.solid[i] && self.cover[i] == NONE
    }

    /// The rectangle in `slot`, if the slot holds one.
    pub(crate) fn rect(&self, slot: u32) -> Option<CellRect> {
        self.rects.get(slot as usize).copied().flatten()
    }

    /// The slot of the rectangle covering the cell, if any.
    pub(crate) fn rect_at(&self, x: u32, y: u32) -> Option<u32> {
        if x < self.width && y < self.height {
            let slot = self.cover[self.index(x, y)];
            (slot != NONE).then_some(slot)
        } else {
            None
        }
    }

    /// Every rectangle with its slot.
    pub(crate) fn rects(&self) -> impl Iterator<Item = (u32, CellRect)> + '_ {
        self.rects
            .iter()
            .enumerate()
            .filter_map(|(slot, rect)| rect.map(|r| (slot as u32, r)))
    }

    /// The number of rectangles.
    pub(crate) fn rect_count(&self) -> usize {
        self.rects.len() - self.free.len()
    }

    /// The memory the grid holds, in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.solid.capacity()
            + self.cover.capacity() * size_of::<u32>()
            + self.rects.capacity() * size_of::<Option<CellRect>>()
            + self.free.capacity() * size_of::<u32>()
            + self.seeds.capacity() * size_of::<(u32, u32)>()
    }

    /// Grows the rectangle whose bottom-left cell is the free cell `(x, y)`: right first,
    /// then up. Returns its slot.
    fn grow(&mut self, x: u32, y: u32) -> u32 {
        let mut x1 = x;
        while x1 + 1 < self.width && x1 + 1 - x < self.max_size.x && self.is_free(x1 + 1, y) {
            x1 += 1;
        }
        let mut y1 = y;
        while y1 + 1 < self.height
            && y1 + 1 - y < self.max_size.y
            && (x..=x1).all(|cx| self.is_free(cx, y1 + 1))
        {
            y1 += 1;
        }
        let rect = CellRect {
            min: UVec2::new(x, y),
            max: UVec2::new(x1, y1),
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.rects[slot as usize] = Some(rect);
                slot
            }
            None => {
                self.rects.push(Some(rect));
                (self.rects.len() - 1) as u32
            }
        };
        for cy in y..=y1 {
            let row = self.index(x, cy);
            self.cover[row..=row + (x1 - x) as usize].fill(slot);
        }
        slot
    }

    /// Takes the rectangle in `slot` out, keeping its cells as seeds for the re-merge.
    fn take(&mut self, slot: u32, change: &mut GridChange) {
        let Some(rect) = self.rects.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        for cy in rect.min.y..=rect.max.y {
            let row = self.index(rect.min.x, cy);
            self.cover[row..=row + (rect.max.x - rect.min.x) as usize].fill(NONE);
            self.seeds
                .extend((rect.min.x..=rect.max.x).map(|cx| (cy, cx)));
        }
        self.free.push(slot);
        change.removed.push(slot);
    }

    /// Makes the cell solid or empty, and re-merges only what the change touches: the
    /// rectangle that covered it (removal), or the rectangles covering its four
    /// neighbours (addition), together with the cell. Outside the grid, or without a
    /// change, nothing happens and `false` is returned.
    pub(crate) fn set(&mut self, x: u32, y: u32, solid: bool, change: &mut GridChange) -> bool {
        if x >= self.width || y >= self.height {
            return false;
        }
        let i = self.index(x, y);
        if self.solid[i] == solid {
            return false;
        }
        self.seeds.clear();
        if solid {
            self.solid[i] = true;
            self.seeds.push((y, x));
            let neighbours = [
                (x.wrapping_sub(1), y),
                (x + 1, y),
                (x, y.wrapping_sub(1)),
                (x, y + 1),
            ];
            for (nx, ny) in neighbours {
                if let Some(slot) = self.rect_at(nx, ny) {
                    self.take(slot, change);
                }
            }
        } else {
            if let Some(slot) = self.rect_at(x, y) {
                self.take(slot, change);
            }
            self.solid[i] = false;
        }
        // Row-major order, as in the whole-grid merge.
        let mut seeds = core::mem::take(&mut self.seeds);
        seeds.sort_unstable();
        for &(cy, cx) in &seeds {
            if self.is_free(cx, cy) {
                let slot = self.grow(cx, cy);
                change.added.push(slot);
            }
        }
        self.seeds = seeds;
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // A failed unwrap is a failed test.
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the tests need no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u32) -> u32 {
            (self.next() % u64::from(n)) as u32
        }
    }

    /// Checks the invariant from scratch: each solid cell is in exactly one rectangle,
    /// no empty cell in any, sizes within the limit, and `rect_at` agrees.
    fn check(grid: &TileGrid, solid: &[bool], max: UVec2) {
        let mut count = vec![0u32; solid.len()];
        for (slot, rect) in grid.rects() {
            let size = rect.max - rect.min + UVec2::ONE;
            assert!(size.x <= max.x && size.y <= max.y, "{rect:?} over {max}");
            for y in rect.min.y..=rect.max.y {
                for x in rect.min.x..=rect.max.x {
                    let i = (y * grid.width + x) as usize;
                    count[i] += 1;
                    assert!(solid[i], "{rect:?} covers the empty cell ({x}, {y})");
                    assert_eq!(grid.rect_at(x, y), Some(slot));
                }
            }
        }
        for (i, &s) in solid.iter().enumerate() {
            assert_eq!(
                count[i],
                u32::from(s),
                "cell {i}: covered {} times",
                count[i]
            );
        }
    }

    #[test]
    fn random_grids_and_edits_stay_covered_exactly() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..60 {
            let (w, h) = (1 + rng.below(24), 1 + rng.below(24));
            let max = UVec2::new(1 + rng.below(8), 1 + rng.below(8));
            let density = rng.below(100);
            let mut solid: Vec<bool> = (0..w * h).map(|_| rng.below(100) < density).collect();
            let mut change = GridChange::default();
            let mut grid =
                TileGrid::build(w, h, max, |x, y| solid[(y * w + x) as usize], &mut change);
            assert_eq!(change.added.len(), grid.rect_count(), "round {round}");
            check(&grid, &solid, max);
            for _ in 0..40 {
                let (x, y) = (rng.below(w), rng.below(h));
                let value = rng.below(2) == 0;
                let before: Vec<(u32, CellRect)> = grid.rects().collect();
                change.clear();
                let changed = grid.set(x, y, value, &mut change);
                let i = (y * w + x) as usize;
                assert_eq!(changed, solid[i] != value);
                solid[i] = value;
                check(&grid, &solid, max);
                // Only rectangles at the cell or beside it were replaced.
                for slot in &change.removed {
                    let (_, old) = before.iter().find(|(s, _)| s == slot).copied().unwrap();
                    let near = old.min.x <= x + 1
                        && x <= old.max.x + 1
                        && old.min.y <= y + 1
                        && y <= old.max.y + 1;
                    assert!(near, "{old:?} replaced for an edit at ({x}, {y})");
                }
                assert!(change.removed.len() <= 4);
            }
        }
    }

    #[test]
    fn full_rows_merge_into_one_rectangle_per_limit() {
        let mut change = GridChange::default();
        let grid = TileGrid::build(10, 3, UVec2::new(4, 8), |_, _| true, &mut change);
        // Three columns of width 4, 4 and 2, each the full height.
        assert_eq!(grid.rect_count(), 3);
        let mut rects: Vec<CellRect> = grid.rects().map(|(_, r)| r).collect();
        rects.sort_by_key(|r| r.min.x);
        assert_eq!(rects[2].min, UVec2::new(8, 0));
        assert_eq!(rects[2].max, UVec2::new(9, 2));
    }

    #[test]
    fn outside_and_unchanged_cells_are_no_change() {
        let mut change = GridChange::default();
        let mut grid = TileGrid::build(4, 4, UVec2::splat(4), |x, _| x == 0, &mut change);
        change.clear();
        assert!(!grid.set(9, 0, true, &mut change));
        assert!(!grid.set(0, 0, true, &mut change));
        assert!(change.removed.is_empty() && change.added.is_empty());
    }
}

/// Where a map's tiles are in the map entity's local frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct MapFrame {
    /// The center of tile (0, 0).
    pub origin: Vec2,
    /// The distance between tile centers on each axis (`TilemapGridSize`).
    pub grid: Vec2,
}

impl MapFrame {
    /// The center and half size of the box of tiles `min..=max`.
    pub(crate) fn rect_box(&self, min: UVec2, max: UVec2) -> (Vec2, Vec2) {
        let center = self.origin + (min.as_vec2() + max.as_vec2()) * 0.5 * self.grid;
        let half = (max - min + UVec2::ONE).as_vec2() * 0.5 * self.grid;
        (center, half)
    }

    /// The cell under a local point (cells may lie outside the map).
    pub(crate) fn cell(&self, local: Vec2) -> IVec2 {
        ((local - self.origin) / self.grid + 0.5).floor().as_ivec2()
    }
}
