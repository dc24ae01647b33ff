//! The broad phase
//! ([`CollisionSystems::BroadPhase`](crate::plugin::CollisionSystems::BroadPhase)): new
//! candidate pairs from the tree.

use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::plugin::key::Key;
use crate::plugin::pairs::Pair;
use crate::plugin::pool::pool_for;
use crate::plugin::{AabbTree, CollisionConfig};
use crate::tree::LayerTest;

/// The tree's pair update, its search spread over the compute task pool when the config
/// asks for it, enough colliders moved and the pool has more than one thread, and the
/// rebuilds that end it planned there too (`DynamicTree::update_pairs_on`). The pairs are
/// the same either way; the parallel ones are joined in task order. Returns the number of
/// search tasks run on the pool (0: serial).
///
/// Each task writes into its own list, kept by the tree between ticks: a list grows
/// only when its task reports more pairs than it ever has (and the pool's spawning of a
/// task is the pool's).
fn update_pairs<V: Vector>(
    tree: &mut crate::DynamicTree<V, Entity>,
    config: &CollisionConfig,
    pairs: &mut Vec<(crate::ProxyId, crate::ProxyId)>,
) -> usize {
    let Some(pool) = pool_for(config, tree.moved_count()) else {
        tree.update_pairs(pairs);
        return 0;
    };
    tree.update_pairs_on(pairs, &pool)
}

/// Pairs between the two trees: moved colliders of each tree against the other tree.
/// Static colliders are never walked against their own tree.
///
/// Cases:
/// - no static collider moved (the usual tick): each moved collider of the moving tree
///   finds the static colliders its fat box overlaps, from its neighbourhood list (see
///   [`Neighbourhoods`](crate::plugin::neighbourhoods::Neighbourhoods)) or a query of
///   the static tree; only pairs it does not have yet are reported;
/// - more static colliders moved than the moving tree holds (a level spawned): every
///   moving collider queries the static tree once, which finds every pair with a moved
///   static collider, and every pair of a moved moving one, for fewer queries;
/// - otherwise both: moved moving colliders look up the static ones as in the first
///   case, moved static ones query the moving tree; a pair of two moved colliders is
///   found from both sides, so that part of the list is sorted and deduplicated.
///
/// Lists near a static collider that moved (or is new) are dropped first.
fn cross_pairs<V: Vector>(state: &mut AabbTree<V>) {
    let AabbTree {
        tree,
        static_tree,
        bodies,
        pairs,
        neighbourhoods,
        tick,
        ..
    } = state;
    // A collider's layers, for the searches that skip what it cannot interact with.
    let layers_of = |key: Key| {
        bodies
            .get(key)
            .and_then(Option::as_ref)
            .map_or(LayerTest::Any, |b| {
                LayerTest::InteractsWith(b.layers.into())
            })
    };
    let (tree, static_tree) = (&*tree, &*static_tree);
    if static_tree.is_empty() && tick.colliders.moved.iter().all(|k| !k.is_static()) {
        return;
    }
    tick.pair_search.moved_static.clear();
    tick.pair_search
        .moved_static
        .extend(tick.colliders.moved.iter().filter(|k| k.is_static()));
    let static_moved = tick.pair_search.moved_static.len();
    // (A moved collider is in its tree; were it not, every list near anything goes.)
    let everywhere = BoundingBox::from_min_max(-V::INFINITY, V::INFINITY);
    neighbourhoods.forget_near(
        tick.pair_search
            .moved_static
            .iter()
            .map(|k| static_tree.fat_box(k.proxy()).unwrap_or(everywhere)),
    );
    let out = &mut tick.pair_search.new_pairs;
    let first = out.len();
    if static_moved > 0 && static_moved >= tree.len() {
        for (id, _, fat) in tree.proxies() {
            let layers = layers_of(Key::moving(id));
            static_tree.query_box_in(&fat, layers, |s, _| {
                out.push((Key::moving(id), Key::fixed(s)));
                true
            });
        }
        return;
    }
    let known = &mut tick.pair_search.known_static;
    for &key in &tick.colliders.moved {
        if key.is_static() {
            let Some(fat) = static_tree.fat_box(key.proxy()) else {
                continue;
            };
            tree.query_box_in(&fat, layers_of(key), |o, _| {
                out.push((Key::moving(o), key));
                true
            });
            continue;
        }
        let Some(fat) = tree.fat_box(key.proxy()) else {
            continue;
        };
        let layers = match layers_of(key) {
            LayerTest::InteractsWith(layers) => layers,
            _ => crate::tree::Layers::ALL,
        };
        // A collider that interacts with nothing has no static partner to look for.
        if !layers.interacts_with_any() {
            continue;
        }
        // The static partners it has already, from its own list of pairs: the static
        // colliders' lists, one scattered read each in a large level, are not touched.
        known.clear();
        let mut next = pairs.first_of(key);
        while let Some(i) = next {
            let other = pairs.get(i).other(key);
            if other.is_static() {
                known.push(other);
            }
            next = pairs.next_of(i, key);
        }
        known.sort_unstable();
        neighbourhoods.overlapping(key.proxy(), &fat, layers, static_tree, |s| {
            let o = Key::fixed(s);
            // A new pair is checked against the static tree itself, which a proxy left
            // in the list by a removed static collider fails.
            if known.binary_search(&o).is_err()
                && static_tree.fat_box(s).is_some_and(|b| b.overlaps(&fat))
            {
                out.push((key, o));
            }
        });
    }
    if static_moved > 0 && static_moved < tick.colliders.moved.len() {
        let cross = &mut out[first..];
        cross.sort_unstable();
        let mut kept = first;
        for i in first..out.len() {
            if kept == first || out[i] != out[kept - 1] {
                out[kept] = out[i];
                kept += 1;
            }
        }
        out.truncate(kept);
    }
}

/// The system of [`CollisionSystems::BroadPhase`](crate::plugin::CollisionSystems::BroadPhase):
/// new candidate pairs from the trees, filtered by layers, for the colliders the prepare
/// stage moved (`TickBuffers::prepare`).
pub(crate) fn broad_phase<V: Vector>(config: Res<CollisionConfig>, mut state: ResMut<AabbTree<V>>) {
    let start = Instant::now();
    let state = &mut *state;
    state.tick.pair_search.new_pairs.clear();
    // The static tree's layer unions for the searches into it (nothing to do unless new
    // static colliders changed its shape).
    state.static_tree.refresh_layers();
    // Before the moving tree's update, which forgets its moves.
    cross_pairs(state);
    let mut tree_pairs = core::mem::take(&mut state.tick.pair_search.tree_pairs);
    tree_pairs.clear();
    let walk = Instant::now();
    state.stats.parallel_tasks = update_pairs(&mut state.tree, &config, &mut tree_pairs);
    state.stats.tree_ms += walk.elapsed().as_secs_f32() * 1000.0;
    if state.tick.colliders.moved.iter().any(|k| k.is_static()) {
        state.static_tree.refit();
    }
    // Fresh unions for the spatial queries of the rest of the frame.
    state.tree.refresh_layers();
    state.static_tree.refresh_layers();
    let first_added = state.pairs.len();
    let new_pairs = core::mem::take(&mut state.tick.pair_search.new_pairs);
    let moving_pairs = tree_pairs
        .iter()
        .map(|&(a, b)| (Key::moving(a), Key::moving(b)));
    for (a, b) in new_pairs.iter().copied().chain(moving_pairs) {
        if state.pairs.contains(a, b) {
            continue;
        }
        let (Some(ba), Some(bb)) = (state.body(a), state.body(b)) else {
            continue;
        };
        if !ba.layers.interacts_with(&bb.layers) {
            continue;
        }
        // Linked below, once sorted (each pair is reported once).
        state.pairs.push_unlinked(Pair::new(a, b));
    }
    // The walk's order depends on whether it ran in parallel, and on how many threads the
    // pool has. Sorted, the pairs added (fewer than the walk reports: most are candidates
    // already) come in the same order on every machine, and so do `touching_pairs`,
    // `colliding_with` and `pass_throughs`.
    state
        .pairs
        .unlinked_mut(first_added)
        .sort_unstable_by_key(|p| (p.a, p.b));
    state.pairs.link_from(first_added);
    state.stats.new_candidates = state.pairs.len() - first_added;
    state.tick.pair_search.new_pairs = new_pairs;
    state.tick.pair_search.tree_pairs = tree_pairs;
    state.stats.broad_ms = start.elapsed().as_secs_f32() * 1000.0;
}
