//! The narrow phase
//! ([`CollisionSystems::NarrowPhase`](crate::plugin::CollisionSystems::NarrowPhase)):
//! exact and swept tests of the candidate pairs.

use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::{BoundingBox, sweep_ball_box, sweep_balls, sweep_boxes, sweep_rounded};
use crate::plugin::key::{ByKey, Key};
use crate::plugin::pairs::{Pair, PairTable};
use crate::plugin::state::{Body, EndRecord, PassThrough, StartRecord, StaticSide, TickBuffers};
use crate::plugin::{AabbTree, CollisionConfig, EndReason, WorldShape};
use crate::tree::DynamicTree;

/// Processed static colliders up to which a tick whose moving colliders were mostly
/// processed takes the one pass over every pair (see [`narrow_phase`]).
const ONE_PASS_STATICS: usize = 64;

/// A normal from `a` towards `b` for shapes that already overlap: the axis of least
/// penetration for two boxes, the contact's normal for a pair with a rounded box, the line
/// of centers otherwise; zero when centers coincide, and for two boxes whose centers line
/// up along that axis (neither way is out).
///
/// Exactly opposite when `a` and `b` swap (but for the sign of zero coordinates), so
/// that a pair's normal does not depend on the side it is tested from.
fn overlap_normal<V: Vector>(a: &WorldShape<V>, b: &WorldShape<V>) -> V {
    if let (WorldShape::Box(x), WorldShape::Box(y)) = (a, b) {
        let mut best = f32::INFINITY;
        let mut normal = V::ZERO;
        let d = y.center() - x.center();
        for axis in 0..V::DIM {
            let depth =
                x.max.axis(axis).min(y.max.axis(axis)) - x.min.axis(axis).max(y.min.axis(axis));
            if depth < best {
                best = depth;
                normal = V::ZERO;
                let along = d.axis(axis);
                if along != 0.0 {
                    normal.set_axis(axis, if along < 0.0 { -1.0 } else { 1.0 });
                }
            }
        }
        return normal;
    }
    if matches!(a, WorldShape::Rounded(_)) || matches!(b, WorldShape::Rounded(_)) {
        // The line of centers says little about a long capsule beside another shape.
        return a.contact(b).map_or(V::ZERO, |c| c.normal);
    }
    let d = b.center() - a.center();
    let len = d.dot(d).sqrt();
    if len > 0.0 { d / len } else { V::ZERO }
}

/// The swept test of a pair over the tick: first contact and normal, or `None`.
fn sweep<V: Vector>(a0: &WorldShape<V>, da: V, b0: &WorldShape<V>, db: V) -> Option<(f32, V)> {
    let hit = match (a0, b0) {
        (WorldShape::Box(x), WorldShape::Box(y)) => sweep_boxes(x, da, y, db),
        (WorldShape::Ball(x), WorldShape::Ball(y)) => sweep_balls(x, da, y, db),
        (WorldShape::Ball(x), WorldShape::Box(y)) => sweep_ball_box(x, da, y, db),
        (WorldShape::Box(x), WorldShape::Ball(y)) => sweep_ball_box(y, db, x, da).map(|mut h| {
            h.normal = -h.normal;
            h
        }),
        // A pair with a capsule or rounded box: the one sweep of the family.
        _ => sweep_rounded(&a0.to_rounded(), da, &b0.to_rounded(), db),
    }?;
    Some((hit.u0, hit.normal))
}

/// The system of [`CollisionSystems::NarrowPhase`](crate::plugin::CollisionSystems::NarrowPhase):
/// exact and swept tests of the pairs of every collider processed this tick; records the
/// transitions in `TickBuffers::narrow`.
///
/// A pair of two idle colliders is not visited: neither shape, displacement nor layers
/// changed, so neither did its state. A pair of two processed colliders is visited once,
/// from the one processed first.
///
/// Cases, by which colliders were processed:
/// - most colliders: one pass over every pair, in slot order, testing each. It reads the
///   pairs in memory order, and the reads of one pair's colliders do not wait for the
///   last pair's, as they do when following a list from pair to pair;
/// - most moving colliders and few static ones (a crowd walking over a level): the same
///   pass, testing only the pairs with a processed side;
/// - otherwise: each processed collider's own list of pairs.
pub(crate) fn narrow_phase<V: Vector>(
    config: Res<CollisionConfig>,
    mut state: ResMut<AabbTree<V>>,
) {
    let start = Instant::now();
    let state = &mut *state;
    let processed = core::mem::take(&mut state.tick.colliders.processed);
    let before = state.tick.colliders.processed_before;
    let mut pass_throughs = 0;
    let colliders = state.tree.len() + state.static_tree.len();
    let mut statics = core::mem::take(&mut state.tick.starts.processed_static);
    statics.clear();
    let most = processed.len() * 2 >= colliders;
    let static_count = processed.iter().filter(|k| k.is_static()).count();
    let moving = processed.len() - static_count;
    let crowd = !most && moving * 2 >= state.tree.len() && static_count <= ONE_PASS_STATICS;
    if crowd {
        statics.extend(processed.iter().filter(|k| k.is_static()));
        statics.sort_unstable();
    }
    let AabbTree {
        tree,
        static_tree,
        bodies,
        pairs,
        tick,
        ..
    } = state;
    let body = |key: Key| bodies.get(key).and_then(Option::as_ref);
    let mut tests = PairTests {
        trees: [&*tree, &*static_tree],
        pairs,
        tick,
        config: &config,
        before,
    };
    if most || crowd {
        // Whether a pair has a side processed this tick (always so when most colliders
        // were). A static collider is looked up in the sorted list rather than read, so
        // that a pass over a crowd's pairs with a level reads no idle static collider.
        let processed_now = |key: Key| {
            most || if key.is_static() {
                statics.binary_search(&key).is_ok()
            } else {
                body(key).is_some_and(|b| b.processed_at > before)
            }
        };
        let mut i = 0;
        while i < tests.pairs.len() {
            let pair = tests.pairs.get(i);
            if !processed_now(pair.a) && !processed_now(pair.b) {
                i += 1;
                continue;
            }
            let mut copy = None;
            let Some((a, b, fixed_fat)) = tests.sides(bodies, i, &pair, &mut copy) else {
                tests.pairs.remove_at(i);
                continue;
            };
            let (keep, swept) = tests.test_pair(i, &pair, (a, b), fixed_fat);
            pass_throughs += usize::from(swept);
            if keep {
                i += 1;
            } else {
                tests.pairs.remove_at(i);
            }
        }
    } else {
        for &key in &processed {
            let Some(this) = body(key).map(|b| b.processed_at) else {
                continue;
            };
            let mut next = tests.pairs.first_of(key);
            while let Some(i) = next {
                let pair = tests.pairs.get(i);
                next = tests.pairs.next_of(i, key);
                let mut copy = None;
                let Some((a, b, fixed_fat)) = tests.sides(bodies, i, &pair, &mut copy) else {
                    continue;
                };
                let other = if pair.a == key { b } else { a };
                if other.processed_at > before && other.processed_at < this {
                    // Visited from the other side already.
                    continue;
                }
                let (keep, swept) = tests.test_pair(i, &pair, (a, b), fixed_fat);
                pass_throughs += usize::from(swept);
                if !keep {
                    let last = tests.pairs.len() - 1;
                    tests.pairs.remove_at(i);
                    if next == Some(last) {
                        // The last pair took the removed one's slot.
                        next = Some(i);
                    }
                }
            }
        }
    }
    state.tick.colliders.processed = processed;
    state.tick.starts.processed_static = statics;
    state.tick.ends.after_tests = true;
    state.stats.pass_throughs = pass_throughs;
    state.stats.candidates = state.pairs.len();
    state.stats.touching = state.pairs.touching_count();
    state.stats.narrow_ms = start.elapsed().as_secs_f32() * 1000.0;
}

/// What the tests of the pairs read and write besides the colliders' records: the trees
/// (for fat boxes), the pairs (their flags and copies) and the tick's records.
struct PairTests<'a, V: Vector> {
    /// The moving tree, then the static one.
    trees: [&'a DynamicTree<V, Entity>; 2],
    pairs: &'a mut PairTable<StaticSide<V>>,
    tick: &'a mut TickBuffers<V>,
    config: &'a CollisionConfig,
    /// The count of processed colliders before this tick (see `Body::processed_at`).
    before: u64,
}

/// A pair's two colliders as the tests read them, and its static collider's fat box.
type PairSides<'b, V> = (&'b Body<V>, &'b Body<V>, Option<BoundingBox<V>>);

impl<V: Vector> PairTests<'_, V> {
    /// The fat box of `key` in its tree (`AabbTree::fat_box`, from the trees held apart
    /// so that the records stay borrowed while the pairs and the tick's records change).
    fn fat_box(&self, key: Key) -> Option<BoundingBox<V>> {
        self.trees[usize::from(key.is_static())].fat_box(key.proxy())
    }

    /// The two colliders of the pair in slot `i` as the tests read them (their records,
    /// read in place), and the fat box of its static collider when it has one and the
    /// box is at hand. The static side comes from the copy stored with the pair when there
    /// is one (the collider was not processed since; it is put in `copy`), else from its
    /// record and the static tree, and is then copied for the next ticks unless it was
    /// processed in this one: a crowd over a large level reads its pairs' copies in slot
    /// order rather than records and tree nodes scattered over a table of every static
    /// collider.
    #[inline(always)]
    fn sides<'b>(
        &mut self,
        bodies: &'b ByKey<Option<Body<V>>>,
        i: usize,
        pair: &Pair,
        copy: &'b mut Option<Body<V>>,
    ) -> Option<PairSides<'b, V>> {
        let body = |key: Key| bodies.get(key).and_then(Option::as_ref);
        // At most one side is static.
        let (fixed, other) = if pair.b.is_static() {
            (pair.b, pair.a)
        } else if pair.a.is_static() {
            (pair.a, pair.b)
        } else {
            return Some((body(pair.a)?, body(pair.b)?, None));
        };
        let other = body(other)?;
        let (fixed_body, fat) = match self.pairs.copy(i) {
            Some(side) => (&*copy.insert(side.body()), Some(side.fat)),
            None => {
                let record = body(fixed)?;
                // Processed this tick: no copy (a copy reads as not processed this tick),
                // and the fat box only if the test needs it.
                if record.processed_at > self.before {
                    (record, None)
                } else {
                    let fat = self.fat_box(fixed)?;
                    self.pairs.set_copy(i, StaticSide::of(record, fat));
                    (record, Some(fat))
                }
            }
        };
        Some(if pair.b.is_static() {
            (other, fixed_body, fat)
        } else {
            (fixed_body, other, fat)
        })
    }

    /// Tests the pair in slot `i` and records its transition. Returns whether the pair
    /// stays a candidate, and whether only the swept test saw its contact. `fixed_fat`:
    /// the static collider's fat box when [`Self::sides`] had it (else read from the tree
    /// if needed).
    fn test_pair(
        &mut self,
        i: usize,
        pair: &Pair,
        (a, b): (&Body<V>, &Body<V>),
        fixed_fat: Option<BoundingBox<V>>,
    ) -> (bool, bool) {
        let layers_ok = a.layers.interacts_with(&b.layers);
        // A vetoed pair stays a candidate (its start comes when the veto lifts) but never
        // touches.
        let allowed = layers_ok && !pair.vetoed;
        let touching = allowed && a.shape.overlaps(&b.shape);
        let moving = a.displacement != V::ZERO || b.displacement != V::ZERO;
        let mut swept_only = false;
        if pair.touching && !touching {
            let reason = if !layers_ok {
                EndReason::LayersChanged
            } else if pair.vetoed {
                EndReason::Filtered
            } else {
                EndReason::Separated
            };
            self.tick.ends.tested.push(EndRecord {
                a: a.entity,
                b: b.entity,
                reason,
            });
        } else if !pair.touching && allowed {
            let a0 = a.shape.translated(-a.displacement);
            let b0 = b.shape.translated(-b.displacement);
            let hit = if !moving || !self.config.swept {
                touching.then(|| (0.0, overlap_normal(&a.shape, &b.shape)))
            } else if a0.overlaps(&b0) {
                Some((0.0, overlap_normal(&a0, &b0)))
            } else {
                sweep(&a0, a.displacement, &b0, b.displacement)
                    .or_else(|| touching.then(|| (1.0, overlap_normal(&a.shape, &b.shape))))
            };
            if let Some((time_of_impact, normal)) = hit {
                self.tick.starts.started.push(StartRecord {
                    a: a.entity,
                    b: b.entity,
                    time_of_impact,
                    normal,
                });
                if !touching {
                    self.tick.starts.pass_throughs.push(PassThrough {
                        entity: a.entity,
                        other: b.entity,
                        position: a0.center() + a.displacement * time_of_impact,
                        time_of_impact,
                    });
                    swept_only = true;
                    self.tick.ends.tested.push(EndRecord {
                        a: a.entity,
                        b: b.entity,
                        reason: EndReason::PassedThrough,
                    });
                }
            }
        }
        self.pairs.set_touching(i, touching);
        // A touching pair stays a candidate without reading its fat boxes; a static side's
        // fat box comes with its copy.
        let fat = |key: Key| match fixed_fat {
            Some(fat) if key.is_static() => Some(fat),
            _ => self.fat_box(key),
        };
        let keep = layers_ok
            && (touching
                || match (fat(pair.a), fat(pair.b)) {
                    (Some(x), Some(y)) => x.overlaps(&y),
                    _ => false,
                });
        (keep, swept_only)
    }
}
