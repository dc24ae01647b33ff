//! Random sequences of tree operations against the tests' model of the tree
//! (`tests/kit/tree_model.rs`, which the proptests of `tests/tree/tree.rs` drive too).
//!
//! The first input byte picks the dimension (2D or 3D); the rest decodes into operations:
//! create (with and without a predicted displacement), remove (also of ids already
//! removed), bulk remove, move (small steps and teleports), touch (of live and dead ids),
//! batches of moves (large enough to sort and to refit the whole tree, serial and
//! parallel), set margin, bulk build, rebuild (a build of no items), move cache on and
//! off, clear, pair updates (serial, and parallel with the rebuilds that follow planned on
//! the update's threads) and every query. Some operations get hostile values (NaN,
//! infinities, negative extents, huge coordinates): the tree must refuse them with an
//! error and stay unchanged, never panic.
//!
//! The model checks each operation's outcome and, after every operation, `validate()` and
//! the tree's agreement with its map of the live proxies (see the model's documentation).
//! This target only decides which operations to run.

#![no_main]

use arbitrary::{Result, Unstructured};
use bevy_aabb_tree::{BatchThresholds, BoundingBox, DynamicTree, ProxyId, Vec2, Vec3, Vector};
use libfuzzer_sys::fuzz_target;

// The model and the queries' check, shared with the integration tests.
#[path = "../../tests/kit/tree_model.rs"]
mod tree_model;
#[path = "../../tests/kit/tree_queries.rs"]
mod tree_queries;

use tree_model::TreeModel;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(three_d) = u.arbitrary::<bool>() else {
        return;
    };
    if three_d {
        run::<Vec3>(&mut u);
    } else {
        run::<Vec2>(&mut u);
    }
});

/// Most operations per input: keeps one input's run short.
const MAX_OPS: usize = 400;

fn run<V: Vector>(u: &mut Unstructured) {
    let margin = match u.int_in_range(0u8..=3) {
        Ok(0) => 0.0,
        Ok(1) => 0.05,
        Ok(2) => 0.1,
        _ => 1.0,
    };
    // Half of the inputs run at the default batch thresholds, half at small ones, with
    // which the small trees of an input take every path of a batch (sorted, refitted,
    // spread over threads in many tasks).
    let mut tree = DynamicTree::with_margin(margin);
    if u.arbitrary::<bool>().unwrap_or(false) {
        tree.set_batch_thresholds(BatchThresholds {
            sort_from: 16,
            parallel_moves_from: 32,
            min_moves_per_task: 8,
            min_proxies_per_task: 8,
        });
    }
    let mut m = TreeModel::<V>::new(tree);
    for _ in 0..MAX_OPS {
        if u.is_empty() || step(&mut m, u).is_err() {
            break;
        }
    }
    m.finish();
}

/// A coordinate. Sane values sit on a coarse grid (so faces often touch exactly) or are
/// uniform in -20..20; hostile ones are NaN, infinities, huge, subnormal or any bit
/// pattern.
fn value(u: &mut Unstructured, hostile: bool) -> Result<f32> {
    if hostile && u.ratio(1u8, 2)? {
        return Ok(match u.int_in_range(0u8..=11)? {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 1e30,
            4 => -1e30,
            5 => f32::MAX,
            6 => -f32::MAX,
            7 => f32::MIN_POSITIVE * 0.5,
            8 => -0.0,
            9 => 3.0e38,
            10 => -1e-30,
            _ => f32::from_bits(u.arbitrary()?),
        });
    }
    Ok(if u.arbitrary::<bool>()? {
        f32::from(u.arbitrary::<i8>()?) * 0.25
    } else {
        f32::from(u.arbitrary::<u16>()?) / 65535.0 * 40.0 - 20.0
    })
}

/// A half extent: small and non-negative when sane; negative or hostile otherwise.
fn half_value(u: &mut Unstructured, hostile: bool) -> Result<f32> {
    if hostile {
        return value(u, true);
    }
    Ok(f32::from(u.int_in_range(0u8..=15)?) * 0.25)
}

fn vector<V: Vector>(u: &mut Unstructured, hostile: bool) -> Result<V> {
    Ok(V::truncate_from_3d(Vec3::new(
        value(u, hostile)?,
        value(u, hostile)?,
        value(u, hostile)?,
    )))
}

fn half_vector<V: Vector>(u: &mut Unstructured, hostile: bool) -> Result<V> {
    Ok(V::truncate_from_3d(Vec3::new(
        half_value(u, hostile)?,
        half_value(u, hostile)?,
        half_value(u, hostile)?,
    )))
}

/// A box around a decoded center.
fn tight_box<V: Vector>(u: &mut Unstructured, hostile: bool) -> Result<BoundingBox<V>> {
    Ok(BoundingBox::from_center_half_extents(
        vector(u, hostile)?,
        half_vector(u, hostile)?,
    ))
}

/// An id handed out earlier (possibly destroyed, possibly reused since).
fn pick<V: Vector>(m: &TreeModel<V>, u: &mut Unstructured) -> Result<Option<ProxyId>> {
    if m.issued.is_empty() {
        return Ok(None);
    }
    // Prefer live ids: a random issued id is mostly dead once many were removed.
    if !m.live.is_empty() && u.ratio(3u8, 4)? {
        return Ok(m.nth_live(u.choose_index(m.live.len())?));
    }
    Ok(Some(m.issued[u.choose_index(m.issued.len())?]))
}

/// Decodes one operation and applies it to the model.
fn step<V: Vector>(m: &mut TreeModel<V>, u: &mut Unstructured) -> Result<()> {
    let hostile = u.ratio(1u8, 8)?;
    match u.int_in_range(0u8..=33)? {
        0..=7 => {
            let tight = tight_box(u, hostile)?;
            m.create(tight, None);
        }
        8..=10 => {
            if let Some(id) = pick(m, u)? {
                m.destroy(id);
            }
        }
        11..=18 => {
            let Some(id) = pick(m, u)? else {
                return Ok(());
            };
            let teleport = u.ratio(1u8, 6)?;
            let step = vector::<V>(u, hostile)?;
            let half = half_vector::<V>(u, hostile)?;
            let d = if u.ratio(1u8, 4)? {
                V::ZERO
            } else {
                vector::<V>(u, hostile)? * 0.1
            };
            let center = match m.live.get(&id) {
                Some(entry) if !teleport => entry.tight.center() + step * 0.05,
                _ => step,
            };
            m.move_one(id, BoundingBox::from_center_half_extents(center, half), d);
        }
        19 => {
            let margin = if hostile {
                value(u, true)?
            } else {
                f32::from(u.int_in_range(0u8..=8)?) * 0.125
            };
            m.set_margin(margin);
        }
        20 => {
            // Many ids at once: picked ones (live, dead or repeated), and now and then
            // every live one (the bulk path rebuilds what remains).
            let mut ids = Vec::new();
            for _ in 0..u.int_in_range(0u8..=16)? {
                if let Some(id) = pick(m, u)? {
                    ids.push(id);
                }
            }
            if u.ratio(1u8, 8)? {
                ids.extend(m.live.keys().copied());
            }
            m.destroy_many(&ids);
        }
        21..=22 => {
            let mut tights = Vec::new();
            for _ in 0..u.int_in_range(0u8..=12)? {
                let bad = hostile && u.ratio(1u8, 4)?;
                tights.push(tight_box(u, bad)?);
            }
            m.build(&tights);
        }
        23 => {
            if u.ratio(1u8, 4)? {
                // The move cache on or off: the same tree either way.
                let on = !m.tree.move_cache();
                m.set_move_cache(on);
            } else {
                m.rebuild();
            }
        }
        24 => {
            if u.ratio(1u8, 8)? {
                m.clear();
            } else {
                batch_move(m, u)?;
            }
        }
        25..=27 => {
            let threads = u.int_in_range(1u8..=4)?;
            m.pairs(usize::from(threads));
        }
        28 => {
            // A proxy created moving: its fat box swept along the displacement.
            let tight = tight_box(u, hostile)?;
            let d = vector::<V>(u, hostile)? * 0.1;
            m.create(tight, Some(d));
        }
        29 => {
            // A picked id, or the last one destroyed.
            let id = if u.ratio(1u8, 4)? {
                m.dead_id()
            } else {
                pick(m, u)?
            };
            if let Some(id) = id {
                m.touch(id);
            }
        }
        _ => {
            let a = vector::<V>(u, hostile)?;
            let b = vector::<V>(u, hostile)?;
            let r = if hostile {
                value(u, true)?
            } else {
                f32::from(u.int_in_range(0u8..=24)?) * 0.25
            };
            let max_t = match u.int_in_range(0u8..=7)? {
                0 => f32::INFINITY,
                1 => 0.0,
                2 if hostile => value(u, true)?,
                3 => 1.0,
                _ => 1.5,
            };
            m.queries(a, b, r, max_t);
        }
    }
    Ok(())
}

/// Moves every live proxy in one `move_proxies` batch, in rounds until the batch holds
/// at least 256 moves (so that it sorts its leaves, and refits the whole tree when
/// enough leaves change), plus one move of an id that may be dead.
///
/// Or, half the time, one `move_proxies_parallel` batch on 2 to 4 threads: every live
/// proxy once, in id order or reversed, plus one move of an id that is dead. The fuzz
/// build's small batches and tasks make even a small tree take the parallel paths
/// (decisions in runs of the move cache, the refit as subtree tasks).
fn batch_move<V: Vector>(m: &mut TreeModel<V>, u: &mut Unstructured) -> Result<()> {
    let mut live: Vec<ProxyId> = m.live.keys().copied().collect();
    if live.is_empty() {
        return Ok(());
    }
    let unit = BoundingBox::from_center_half_extents(V::ZERO, V::ONE);
    if u.arbitrary::<bool>()? {
        let threads = usize::from(u.int_in_range(2u8..=4)?);
        let spread = f32::from(u.int_in_range(0u8..=8)?) * 0.05;
        if u.arbitrary::<bool>()? {
            live.reverse();
        }
        let mut moves = Vec::new();
        for &id in &live {
            let hostile = u.ratio(1u8, 32)?;
            let step = vector::<V>(u, hostile)? * spread;
            let tight = m.live[&id].tight;
            let tight =
                BoundingBox::from_center_half_extents(tight.center() + step, tight.half_extents());
            moves.push((id, tight, step));
        }
        if let Some(id) = pick(m, u)?.filter(|id| !m.live.contains_key(id)) {
            moves.push((id, unit, V::ZERO));
        }
        m.move_batch_parallel(&moves, threads);
        return Ok(());
    }
    let mut s: u32 = u.arbitrary()?;
    let spread = f32::from(u.int_in_range(0u8..=8)?) * 0.05;
    let mut r = move || {
        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
        (s >> 8) as f32 / 16_777_216.0 - 0.5
    };
    let mut centers: Vec<V> = live.iter().map(|id| m.live[id].tight.center()).collect();
    let mut moves = Vec::new();
    for _ in 0..256usize.div_ceil(live.len()) {
        for (&id, c) in live.iter().zip(&mut centers) {
            let step = V::truncate_from_3d(Vec3::new(r(), r(), r())) * spread;
            *c += step;
            let half = m.live[&id].tight.half_extents();
            moves.push((id, BoundingBox::from_center_half_extents(*c, half), step));
        }
    }
    if let Some(id) = pick(m, u)? {
        moves.push((id, unit, V::ZERO));
    }
    m.move_batch(&moves);
    Ok(())
}
