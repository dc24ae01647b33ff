//! Static colliders, idle pairs and children of still parents in hand-made scenes (a tile
//! map, crowds on a platform, overwritten and resized colliders, ...), each against the
//! app, event log and overlap formulas of `static_levels`, 2D and 3D.

use std::collections::{BTreeMap, BTreeSet};

use bevy::ecs::entity_disabling::Disabled;
use bevy::prelude::*;
use bevy_aabb_tree::prelude::*;

use super::static_levels::*;
use crate::harness::SpawnInApp;
use crate::kit::dim::{Dim, v};

/// A grid of touching static tiles under a map entity: no pair and no event among the
/// tiles, nothing processed once they are in, every tile in the static tree (built in
/// bulk) and seen by queries. A mover crossing it touches exactly the tiles the oracle
/// says.
fn tile_map<V: Dim>(mode: StaticChangeDetection) {
    let mut app = app::<V>(mode);
    let map = app.spawn_id(Transform::default());
    let n = 60;
    // The mover's box (center (10.2, 10.6), half extent 0.3) against a unit tile's,
    // boundaries included.
    let touches_mover = |x: f32, y: f32| {
        let (lo, hi) = (Vec2::new(10.2, 10.6) - 0.3, Vec2::new(10.2, 10.6) + 0.3);
        x - 0.5 <= hi.x && lo.x <= x + 0.5 && y - 0.5 <= hi.y && lo.y <= y + 0.5
    };
    let mut tiles = Vec::new();
    for x in 0..n {
        for y in 0..n {
            tiles.push(app.spawn_id((
                Transform::from_xyz(x as f32, y as f32, 0.0),
                Aabb::<V>::new(V::splat(0.5)),
                Static,
                ChildOf(map),
            )));
        }
    }
    app.update();
    let state = tree::<V>(&app);
    assert_eq!(state.static_tree().len(), n * n);
    assert_eq!(state.tree().len(), 0);
    assert_eq!(state.candidate_count(), 0);
    assert!(events_at(&app, 1).is_empty());
    state.static_tree().validate().unwrap();
    // A built tree: far from the height of one insertion after another in a row.
    let height = state.static_tree_stats().height as f32;
    assert!(height <= 2.5 * ((n * n) as f32).log2(), "height {height}");
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 0);
    // A mover over the tiles: touches the tiles whose boxes meet its own.
    let mover = app.spawn_id((
        Transform::from_xyz(10.2, 10.6, 0.0),
        Aabb::<V>::new(V::splat(0.3)),
    ));
    app.update();
    let touching: BTreeSet<Pair> = tree::<V>(&app)
        .touching_pairs()
        .map(|(a, b)| key(a, b))
        .collect();
    let expected: BTreeSet<Pair> = tiles
        .iter()
        .enumerate()
        .filter(|(i, _)| touches_mover((i / n) as f32, (i % n) as f32))
        .map(|(_, &t)| key(t, mover))
        .collect();
    assert_eq!(touching.len(), 4);
    assert_eq!(touching, expected);
    // Spatial queries see static colliders.
    let mut system_state = bevy::ecs::system::SystemState::<SpatialQuery<V>>::new(app.world_mut());
    let query = system_state.get(app.world()).expect("the spatial query");
    let hits = query.point(v::<V>(3.2, 4.1, 0.0), &QueryFilter::default());
    assert_eq!(hits, vec![tiles[3 * n + 4]]);
    // The map moves: every tile is processed, in the same tick, and the contacts follow.
    app.world_mut()
        .entity_mut(map)
        .insert(Transform::from_xyz(0.5, 0.0, 0.0));
    app.update();
    let state = tree::<V>(&app);
    assert_eq!(state.stats().processed, n * n);
    let touching: BTreeSet<Pair> = state.touching_pairs().map(|(a, b)| key(a, b)).collect();
    let expected: BTreeSet<Pair> = tiles
        .iter()
        .enumerate()
        .filter(|(i, _)| touches_mover((i / n) as f32 + 0.5, (i % n) as f32))
        .map(|(_, &t)| key(t, mover))
        .collect();
    assert_eq!(touching, expected);
    // Once more, to read as still after the move; then idle.
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, n * n);
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 0);
    // A third of the level despawned in one frame (the mover's tiles among them), then
    // the rest with the map: the static tree stays valid and holds exactly what is left,
    // and the mover's contacts end.
    let (gone, kept) = tiles.split_at(n * n / 3);
    let touching_gone = tree::<V>(&app)
        .colliding_with(mover)
        .filter(|t| gone.contains(t))
        .count();
    for &t in gone {
        app.world_mut().entity_mut(t).despawn();
    }
    app.update();
    let ends = events_at(&app, last_tick(&app))
        .into_iter()
        .filter(|(_, end)| *end == Some(EndReason::Removed))
        .count();
    assert_eq!(ends, touching_gone);
    app.update();
    let state = tree::<V>(&app);
    assert_eq!(state.static_tree().len(), kept.len());
    state.static_tree().validate().unwrap();
    let mut system_state = bevy::ecs::system::SystemState::<SpatialQuery<V>>::new(app.world_mut());
    let query = system_state.get(app.world()).expect("the spatial query");
    let everything = bevy_aabb_tree::BoundingBox::from_center_half_extents(V::ZERO, V::splat(1e4));
    let mut found = query.aabb(&everything, &QueryFilter::default().excluding([mover]));
    found.sort();
    let mut want = kept.to_vec();
    want.sort();
    assert_eq!(found, want);
    app.world_mut().entity_mut(map).despawn();
    app.update();
    app.update();
    let state = tree::<V>(&app);
    assert!(state.static_tree().is_empty());
    state.static_tree().validate().unwrap();
    assert_eq!(state.candidate_count(), 0);
}

#[test]
fn tile_map_2d() {
    for mode in MODES {
        tile_map::<Vec2>(mode);
    }
}

#[test]
fn tile_map_3d() {
    for mode in MODES {
        tile_map::<Vec3>(mode);
    }
}

/// Children of a still parent are idle; plain (not static) touching tiles pair with each
/// other once and then cost nothing.
fn still_children_are_idle<V: Dim>() {
    let mut app = app::<V>(StaticChangeDetection::Scan);
    let map = app.spawn_id(Transform::default());
    for x in 0..10 {
        app.world_mut().spawn((
            Transform::from_xyz(x as f32, 0.0, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
            ChildOf(map),
        ));
    }
    app.update();
    assert_eq!(events_at(&app, 1).len(), 9, "neighbours touch");
    app.update();
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 0);
    assert!(events_at(&app, 3).is_empty());
    // A grandparent moves: every collider below is processed, none separates.
    let root = app.spawn_id(Transform::default());
    app.world_mut().entity_mut(map).insert(ChildOf(root));
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 10);
    app.world_mut()
        .entity_mut(root)
        .insert(Transform::from_xyz(3.0, 1.0, 0.0));
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 10);
    assert!(events_at(&app, last_tick(&app)).is_empty());
    // Once more, to read as still after the move; then idle.
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 10);
    app.update();
    assert_eq!(tree::<V>(&app).stats().processed, 0);
}

#[test]
fn still_children_are_idle_2d() {
    still_children_are_idle::<Vec2>();
}

#[test]
fn still_children_are_idle_3d() {
    still_children_are_idle::<Vec3>();
}

/// Idle pairs whose inputs change: a resize, a layer change, `Disabled`, a despawn, the
/// `Static` marker, each on one collider of a touching pair of still colliders (one of
/// them `Static` when `with_static`). Hand-computed: boxes of half extent 0.5 at x = 0
/// and x = 0.9 overlap by 0.1.
fn idle_pair_changes<V: Dim>(with_static: bool, mode: StaticChangeDetection) {
    let mut app = app::<V>(mode);
    let a = app.spawn_id((Transform::default(), Aabb::<V>::new(V::splat(0.5))));
    let b = app.spawn_id((
        Transform::from_xyz(0.9, 0.0, 0.0),
        Aabb::<V>::new(V::splat(0.5)),
    ));
    if with_static {
        app.world_mut().entity_mut(a).insert(Static);
    }
    let pair = key(a, b);
    let expect = |app: &mut App, events: Vec<(Pair, Option<EndReason>)>| {
        app.update();
        assert_eq!(
            events_at(app, last_tick(app)),
            events,
            "tick {}",
            last_tick(app)
        );
        app.update();
        assert!(events_at(app, last_tick(app)).is_empty());
    };
    expect(&mut app, vec![(pair, None)]);
    // Resized apart (0.5 + 0.3 < 0.9), then back.
    app.world_mut()
        .entity_mut(b)
        .insert(Aabb::<V>::new(V::splat(0.3)));
    expect(&mut app, vec![(pair, Some(EndReason::Separated))]);
    app.world_mut()
        .entity_mut(b)
        .insert(Aabb::<V>::new(V::splat(0.5)));
    expect(&mut app, vec![(pair, None)]);
    // Layers that stop matching, then match again.
    app.world_mut()
        .entity_mut(b)
        .insert(CollisionLayers::new(1, 0));
    expect(&mut app, vec![(pair, Some(EndReason::LayersChanged))]);
    app.world_mut().entity_mut(b).remove::<CollisionLayers>();
    expect(&mut app, vec![(pair, None)]);
    // Disabled and enabled again.
    app.world_mut().entity_mut(a).insert(Disabled);
    app.update();
    app.world_mut().entity_mut(a).remove::<Disabled>();
    let tick = last_tick(&app);
    expect(&mut app, vec![(pair, None)]);
    assert_eq!(
        events_at(&app, tick),
        vec![(pair, Some(EndReason::Removed))]
    );
    // Both static: the contact ends; one static again: it starts.
    app.world_mut().entity_mut(b).insert(Static);
    app.world_mut().entity_mut(a).insert(Static);
    expect(&mut app, vec![(pair, Some(EndReason::BothStatic))]);
    assert_eq!(tree::<V>(&app).candidate_count(), 0);
    app.world_mut().entity_mut(b).remove::<Static>();
    expect(&mut app, vec![(pair, None)]);
    // The marker toggled on the other one: the contact goes on without events.
    if !with_static {
        app.world_mut().entity_mut(a).remove::<Static>();
        expect(&mut app, vec![]);
    }
    // A static collider moved away and back.
    app.world_mut()
        .entity_mut(a)
        .insert(Transform::from_xyz(-5.0, 0.0, 0.0));
    expect(&mut app, vec![(pair, Some(EndReason::Separated))]);
    app.world_mut().entity_mut(a).insert(Transform::default());
    expect(&mut app, vec![(pair, None)]);
    // A despawn of one side.
    app.world_mut().entity_mut(b).despawn();
    expect(&mut app, vec![(pair, Some(EndReason::Removed))]);
    assert_eq!(tree::<V>(&app).candidate_count(), 0);
}

#[test]
fn idle_pair_changes_2d() {
    for mode in MODES {
        idle_pair_changes::<Vec2>(false, mode);
        idle_pair_changes::<Vec2>(true, mode);
    }
}

#[test]
fn idle_pair_changes_3d() {
    for mode in MODES {
        idle_pair_changes::<Vec3>(false, mode);
        idle_pair_changes::<Vec3>(true, mode);
    }
}

/// A static wall (half extent 0.5 at x = 0) and a still moving collider (half extent 0.5
/// at x = 0.9) that overlap by 0.1.
fn wall_and_mover<V: Dim>(app: &mut App) -> (Entity, Entity) {
    let world = app.world_mut();
    let wall = world
        .spawn((Transform::default(), Aabb::<V>::new(V::splat(0.5)), Static))
        .id();
    let mover = world
        .spawn((
            Transform::from_xyz(0.9, 0.0, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
        ))
        .id();
    (wall, mover)
}

/// Writes in place (through `&mut`) on an idle static collider touching a still moving
/// one. Hand-computed: boxes of half extent 0.5 at x = 0 (static) and x = 0.9 overlap
/// by 0.1; at x = -5 they are apart. With `Scan` the next tick sees each write; with
/// `OnInsert` it does not, until the component (or the marker) is inserted again, and
/// idle ticks process nothing at all. Writes on the moving collider are seen in both.
fn writes_in_place<V: Dim>(mode: StaticChangeDetection) {
    let mut app = app::<V>(mode);
    let (wall, mover) = wall_and_mover::<V>(&mut app);
    let pair = key(wall, mover);
    let tick = |app: &mut App| {
        app.update();
        events_at(app, last_tick(app))
    };
    assert_eq!(tick(&mut app), vec![(pair, None)]);
    tick(&mut app);
    assert_eq!(tick(&mut app), vec![]);
    assert_eq!(tree::<V>(&app).stats().processed, 0);
    let detect = mode == StaticChangeDetection::Scan;
    // The wall moved away through `&mut Transform`.
    app.world_mut()
        .get_mut::<Transform>(wall)
        .expect("the wall")
        .translation
        .x = -5.0;
    let seen = tick(&mut app);
    if detect {
        assert_eq!(seen, vec![(pair, Some(EndReason::Separated))]);
    } else {
        assert_eq!(seen, vec![]);
        assert_eq!(tree::<V>(&app).stats().processed, 0);
        // Inserting the marker again makes the write count.
        app.world_mut().entity_mut(wall).insert(Static);
        assert_eq!(tick(&mut app), vec![(pair, Some(EndReason::Separated))]);
    }
    tick(&mut app);
    assert_eq!(tick(&mut app), vec![]);
    assert_eq!(tree::<V>(&app).stats().processed, 0);
    // Grown back into contact through `&mut Aabb` (half extent 6 reaches x = 1).
    app.world_mut()
        .get_mut::<Aabb<V>>(wall)
        .expect("the wall's box")
        .half_extents = V::splat(6.0);
    let seen = tick(&mut app);
    if detect {
        assert_eq!(seen, vec![(pair, None)]);
    } else {
        assert_eq!(seen, vec![]);
        // Inserting the same value again makes the write count.
        let aabb = *app.world().get::<Aabb<V>>(wall).expect("the wall's box");
        app.world_mut().entity_mut(wall).insert(aabb);
        assert_eq!(tick(&mut app), vec![(pair, None)]);
    }
    // The moving collider's writes in place are seen in both modes.
    app.world_mut()
        .get_mut::<Transform>(mover)
        .expect("the mover")
        .translation
        .x = 20.0;
    assert_eq!(tick(&mut app), vec![(pair, Some(EndReason::Separated))]);
}

#[test]
fn writes_in_place_2d() {
    for mode in MODES {
        writes_in_place::<Vec2>(mode);
    }
}

#[test]
fn writes_in_place_3d() {
    for mode in MODES {
        writes_in_place::<Vec3>(mode);
    }
}

/// A static collider's `TrackedCollider` written over by hand (which its docs say not to
/// do) leaves collision detection at once, its contact ending, and comes back at the next
/// tick in both modes, its contact starting again.
fn tracked_collider_overwritten<V: Dim>(mode: StaticChangeDetection) {
    let mut app = app::<V>(mode);
    let (wall, mover) = wall_and_mover::<V>(&mut app);
    let pair = key(wall, mover);
    app.update();
    app.update();
    app.world_mut()
        .entity_mut(wall)
        .insert(TrackedCollider::<V>::default());
    assert!(!tree::<V>(&app).is_touching(wall, mover), "out at once");
    app.update();
    let tick = last_tick(&app);
    let state = tree::<V>(&app);
    assert_eq!(state.static_tree().len(), 1, "{mode:?}: back in");
    assert!(state.is_touching(wall, mover), "{mode:?}");
    // The end, written when the component was overwritten, is read with the tick after.
    let mut events = events_at(&app, tick);
    events.sort_by_key(|(pair, end)| (*pair, end.is_some()));
    assert_eq!(
        events,
        vec![(pair, None), (pair, Some(EndReason::Removed))],
        "{mode:?}"
    );
}

#[test]
fn tracked_collider_overwritten_2d() {
    for mode in MODES {
        tracked_collider_overwritten::<Vec2>(mode);
    }
}

#[test]
fn tracked_collider_overwritten_3d() {
    for mode in MODES {
        tracked_collider_overwritten::<Vec3>(mode);
    }
}

/// A crowd over a level: most moving colliders move every tick (the narrow phase then
/// tests, in one pass, only the pairs with a processed side), and one stays still, with
/// three static colliders around it (half extents 0.5 each, the still one at the origin):
/// - a tile under it at y = -0.9, touching it all along: a pair of two idle colliders,
///   which stays touching without an event;
/// - a platform moved by an insert every tick, by 0.25 from x = -3 to 3 and back, which
///   touches it exactly while its x is within [-1, 1];
/// - a lid at y = 0.99, raised by 0.003 a tick by an insert: processed every tick, but
///   within its fat box (margin 0.05) for 16 ticks; it touches the still collider until
///   y = 0.999 (tick 3) and not from y = 1.002 (tick 4).
///
/// Each tick the touching pairs equal that; over the run each pair starts and ends
/// exactly as often as it touches and stops.
fn crowd_and_platform<V: Dim>(mode: StaticChangeDetection) {
    let mut app = app::<V>(mode);
    let world = app.world_mut();
    // A floor far below: many static colliders for few moving ones.
    for x in -40..40 {
        world.spawn((
            Transform::from_xyz(x as f32, -20.0, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
            Static,
        ));
    }
    let half = Aabb::<V>::new(V::splat(0.5));
    let still = world.spawn((Transform::default(), half)).id();
    let walkers: Vec<Entity> = (0..6)
        .map(|i| {
            let at = Transform::from_xyz(10.0 + 3.0 * i as f32, 10.0, 0.0);
            world.spawn((at, half)).id()
        })
        .collect();
    let spawn_static = |world: &mut World, x: f32, y: f32| {
        world
            .spawn((Transform::from_xyz(x, y, 0.0), half, Static))
            .id()
    };
    let tile = spawn_static(world, 0.0, -0.9);
    let platform = spawn_static(world, -3.0, 0.0);
    let lid = spawn_static(world, 0.0, 0.99);
    let mut counts: BTreeMap<(Pair, bool), usize> = BTreeMap::new();
    for step in 0..48 {
        // There and back: -3 to 3 in 24 steps, then back.
        let k = if step < 24 { step } else { 48 - step };
        let x = -3.0 + 0.25 * k as f32;
        let lid_y = 0.99 + 0.003 * step.min(16) as f32;
        let world = app.world_mut();
        world
            .entity_mut(platform)
            .insert(Transform::from_xyz(x, 0.0, 0.0));
        world
            .entity_mut(lid)
            .insert(Transform::from_xyz(0.0, lid_y, 0.0));
        for (i, &w) in walkers.iter().enumerate() {
            let y = 10.0 + 0.1 * step as f32;
            world
                .entity_mut(w)
                .insert(Transform::from_xyz(10.0 + 3.0 * i as f32, y, 0.0));
        }
        app.update();
        let state = tree::<V>(&app);
        let at = format!("{mode:?}, step {step}");
        assert!(state.is_touching(tile, still), "{at}: the tile");
        assert_eq!(
            state.is_touching(platform, still),
            (-1.0..=1.0).contains(&x),
            "{at}: the platform at x = {x}"
        );
        assert_eq!(state.is_touching(lid, still), step <= 3, "{at}: the lid");
        if step > 0 {
            // Far fewer than half the colliders, but every moving one save one.
            assert_eq!(state.stats().processed, 8, "{at}: walkers, platform, lid");
        }
        for (pair, end) in events_at(&app, last_tick(&app)) {
            *counts.entry((pair, end.is_some())).or_default() += 1;
        }
    }
    let expected = BTreeMap::from([
        ((key(tile, still), false), 1),
        ((key(platform, still), false), 2),
        ((key(platform, still), true), 2),
        ((key(lid, still), false), 1),
        ((key(lid, still), true), 1),
    ]);
    assert_eq!(counts, expected, "{mode:?}");
}

#[test]
fn crowd_and_platform_2d() {
    for mode in MODES {
        crowd_and_platform::<Vec2>(mode);
    }
}

#[test]
fn crowd_and_platform_3d() {
    for mode in MODES {
        crowd_and_platform::<Vec3>(mode);
    }
}

/// Moving colliders over a level keep lists of the static colliders around them, counted
/// in `AabbTree::bytes`; when they are despawned, their lists give their room back but
/// for a few entries. Twenty boxes of half extent 3 over a grid of unit tiles: each list
/// holds the 13 x 13 tiles within its reach.
fn despawned_movers_leave_no_lists<V: Dim>() {
    let mut app = app::<V>(StaticChangeDetection::Scan);
    let world = app.world_mut();
    for x in -30..30 {
        for y in -30..30 {
            world.spawn((
                Transform::from_translation(v::<V>(x as f32, y as f32, 0.0).extend_to_3d()),
                Aabb::<V>::new(V::splat(0.5)),
                Static,
            ));
        }
    }
    app.update();
    let movers: Vec<Entity> = (0..20)
        .map(|i| {
            let p = v::<V>(
                (i % 5) as f32 * 8.0 - 16.0,
                (i / 5) as f32 * 8.0 - 12.0,
                0.0,
            );
            app.spawn_id((
                Transform::from_translation(p.extend_to_3d()),
                Aabb::<V>::new(V::splat(3.0)),
            ))
        })
        .collect();
    app.update();
    let with_movers = tree::<V>(&app).bytes();
    for e in movers {
        app.world_mut().despawn(e);
    }
    app.update();
    let after = tree::<V>(&app).bytes();
    // At least 100 entries of each list given back, 20 bytes or more each (a proxy id
    // and a 2D box).
    assert!(
        after + 20 * 100 * 20 <= with_movers,
        "lists left behind: {after} bytes after, {with_movers} with the movers"
    );
}

#[test]
fn despawned_movers_leave_no_lists_2d() {
    despawned_movers_leave_no_lists::<Vec2>();
}

#[test]
fn despawned_movers_leave_no_lists_3d() {
    despawned_movers_leave_no_lists::<Vec3>();
}

/// A static collider processed in a tick without moving (resized in place, by an insert
/// so that both modes see it) while a moving collider passes through it, the moving one
/// processed after it (as the child of a parent that jumps): the pass is reported once,
/// one start and one `PassedThrough` end. Idle moving colliders far away keep this tick's
/// processed colliders few, so that the narrow phase follows each one's own pairs and
/// meets the pair from both sides.
fn pass_through_a_resized_static<V: Dim>(mode: StaticChangeDetection) {
    let mut app = app::<V>(mode);
    let world = app.world_mut();
    for i in 0..40 {
        world.spawn((
            Transform::from_xyz(100.0 + 2.0 * i as f32, 50.0, 0.0),
            Aabb::<V>::new(V::splat(0.5)),
        ));
    }
    let wall = world
        .spawn((Transform::default(), Aabb::<V>::new(V::splat(0.5)), Static))
        .id();
    let parent = world.spawn(Transform::from_xyz(-3.0, 0.0, 0.0)).id();
    let child = world
        .spawn((
            Transform::default(),
            Aabb::<V>::new(V::splat(0.25)),
            ChildOf(parent),
        ))
        .id();
    for _ in 0..3 {
        app.update();
    }
    assert!(
        app.world().resource::<Log>().events.is_empty(),
        "{mode:?}: nothing touches yet"
    );
    // In one tick: the wall grows in place, the parent jumps across it by 6.
    let world = app.world_mut();
    world.entity_mut(wall).insert(Aabb::<V>::new(V::splat(0.6)));
    world
        .entity_mut(parent)
        .insert(Transform::from_xyz(3.0, 0.0, 0.0));
    app.update();
    let state = tree::<V>(&app);
    assert!(
        state.stats().processed < 10,
        "{mode:?}: the per-collider path"
    );
    let pair = key(wall, child);
    assert_eq!(
        events_at(&app, last_tick(&app)),
        vec![(pair, None), (pair, Some(EndReason::PassedThrough))],
        "{mode:?}"
    );
    for _ in 0..3 {
        app.update();
        assert_eq!(events_at(&app, last_tick(&app)), vec![], "{mode:?}");
    }
}

#[test]
fn pass_through_a_resized_static_2d() {
    for mode in MODES {
        pass_through_a_resized_static::<Vec2>(mode);
    }
}

#[test]
fn pass_through_a_resized_static_3d() {
    for mode in MODES {
        pass_through_a_resized_static::<Vec3>(mode);
    }
}

/// A static collider touching a moving one, its pair tested while it was idle (so the
/// pair holds a copy of it), then changed within its fat box: its layers (it stops
/// interacting) or its size (shrunk from half extent 0.5 to 0.38, away from the moving
/// one at x = 0.9). Each change ends the contact at the next tick, with its reason.
/// `crowd`: the moving colliders are all processed every tick (the narrow phase's one
/// pass); otherwise idle moving colliders far away make the processed ones few and the
/// wall alone is processed at the change (each one's own pairs).
fn copies_follow_static_changes<V: Dim>(mode: StaticChangeDetection, crowd: bool) {
    for change in ["layers", "size"] {
        let mut app = app::<V>(mode);
        let (wall, mover) = wall_and_mover::<V>(&mut app);
        let world = app.world_mut();
        // Static colliders far away: the moving ones are never most of all colliders.
        for i in 0..20 {
            world.spawn((
                Transform::from_xyz(50.0 + 2.0 * i as f32, 50.0, 0.0),
                Aabb::<V>::new(V::splat(0.5)),
                Static,
            ));
        }
        if !crowd {
            for i in 0..20 {
                world.spawn((
                    Transform::from_xyz(-50.0 - 2.0 * i as f32, 50.0, 0.0),
                    Aabb::<V>::new(V::splat(0.5)),
                ));
            }
        }
        let pair = key(wall, mover);
        let at = format!("{mode:?}, crowd {crowd}, {change}");
        let nudge = |app: &mut App, k: u32| {
            let x = 0.9 + 0.001 * k as f32;
            app.world_mut()
                .entity_mut(mover)
                .insert(Transform::from_xyz(x, 0.0, 0.0));
        };
        app.update();
        assert_eq!(events_at(&app, last_tick(&app)), vec![(pair, None)], "{at}");
        // The moving collider moves a little, still touching; the wall is idle.
        for k in 1..=3 {
            nudge(&mut app, k);
            app.update();
            assert_eq!(events_at(&app, last_tick(&app)), vec![], "{at}");
        }
        if !crowd {
            // A tick for the moving collider to be processed once more, still: the
            // change below is then the tick's only processing.
            app.update();
        }
        let world = app.world_mut();
        let reason = if change == "layers" {
            world.entity_mut(wall).insert(CollisionLayers::NONE);
            EndReason::LayersChanged
        } else {
            world
                .entity_mut(wall)
                .insert(Aabb::<V>::new(V::splat(0.38)));
            EndReason::Separated
        };
        if crowd {
            nudge(&mut app, 4);
        }
        app.update();
        assert_eq!(
            events_at(&app, last_tick(&app)),
            vec![(pair, Some(reason))],
            "{at}"
        );
        assert!(!tree::<V>(&app).is_touching(wall, mover), "{at}");
        assert_eq!(
            tree::<V>(&app).stats().processed,
            if crowd { 2 } else { 1 },
            "{at}"
        );
    }
}

#[test]
fn copies_follow_static_changes_2d() {
    for mode in MODES {
        for crowd in [true, false] {
            copies_follow_static_changes::<Vec2>(mode, crowd);
        }
    }
}

#[test]
fn copies_follow_static_changes_3d() {
    for mode in MODES {
        for crowd in [true, false] {
            copies_follow_static_changes::<Vec3>(mode, crowd);
        }
    }
}
