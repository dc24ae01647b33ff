//! Colliders of a `bevy_ecs_tilemap` map, one per tile against merged rectangles: a
//! 1,000 × 1,000 platformer map (ground, walls, platforms) and 1,000 moving boxes.
//!
//! `cargo run --release -p bevy_aabb_tree_bench --features tilemap --bin tilemap_ecs_map
//! -- [ROUNDS]` (default 2).
//!
//! The map (seeded, the same each run): the bottom 20 rows solid (ground); a wall 2 tiles
//! wide and 60 high every 100 columns; platforms 4 to 16 tiles long and 1 high, 40 in
//! every band of 12 rows above the ground. The program prints how many tiles are solid.
//! The movers are boxes of half size 0.4 at random places over the map with random
//! velocities up to 10 tiles a second, moved each tick and bounced off the map's sides.
//!
//! Each round builds a fresh app per mode (the order alternates between rounds) and
//! measures: the first tick (the map's colliders built and inserted into the static
//! tree), the median of 200 later ticks, the memory (the trees' bytes, the plugin's grid,
//! and the collider entities' components), and a tile edit: a solid tile despawned (the
//! next tick), then spawned again (the tick after), each the median over 200 edits at
//! random solid tiles, as the update's time and the tile-map system's share of it.

use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy_aabb_tree::d2::*;
use bevy_aabb_tree::plugin::tilemap::{
    AabbTreeTilemapPlugin, TileCollider, TileColliderMode, TilemapColliderStats, TilemapColliders,
    TilemapCollidersSystems,
};
use bevy_ecs_tilemap::map::{
    TilemapGridSize, TilemapId, TilemapSize, TilemapTileSize, TilemapType,
};
use bevy_ecs_tilemap::tiles::{TilePos, TileStorage};

const SIDE: u32 = 1000;
const MOVERS: usize = 1000;
const TICKS: usize = 200;
const EDITS: usize = 200;
const DT: f32 = 1.0 / 60.0;

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
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The map's solid cells (row-major, y up).
fn level() -> Vec<bool> {
    let mut rng = Rng(0x5eed_7113_0000_0001);
    let mut solid = vec![false; (SIDE * SIDE) as usize];
    let mut set = |x: u32, y: u32| {
        if x < SIDE && y < SIDE {
            solid[(y * SIDE + x) as usize] = true;
        }
    };
    for y in 0..20 {
        for x in 0..SIDE {
            set(x, y);
        }
    }
    for wall in (0..SIDE).step_by(100) {
        for y in 20..80 {
            set(wall, y);
            set(wall + 1, y);
        }
    }
    for band in (32..SIDE).step_by(12) {
        for _ in 0..40 {
            let (x, len) = (rng.below(SIDE), 4 + rng.below(13));
            let y = band + rng.below(6);
            for dx in 0..len {
                set(x + dx, y);
            }
        }
    }
    solid
}

/// Moves the boxes and bounces them off the map's sides.
fn move_boxes(mut q: Query<(&mut Transform, &mut Velocity)>) {
    let side = SIDE as f32;
    for (mut transform, mut velocity) in &mut q {
        let mut c = transform.translation.truncate() + velocity.0 * DT;
        for k in 0..2 {
            if c[k] < 0.0 || c[k] > side {
                c[k] = c[k].clamp(0.0, side);
                velocity.0[k] = -velocity.0[k];
            }
        }
        transform.translation = c.extend(0.0);
    }
}

/// When the tile-map system started and how long it took with its commands, this update.
#[derive(Resource, Default)]
struct SyncTime {
    start: Option<Instant>,
    last: Duration,
}

fn app(solid: &[bool], mode: TileColliderMode) -> (App, Entity) {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, bevy::transform::TransformPlugin))
        .add_plugins((
            AabbTreePlugin::new(Update),
            AabbTreeTilemapPlugin::new(Update),
        ))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
            DT,
        )))
        .init_resource::<SyncTime>()
        .add_systems(
            Update,
            (
                move_boxes.before(CollisionSystems::Prepare),
                (|mut t: ResMut<SyncTime>| t.start = Some(Instant::now()))
                    .before(TilemapCollidersSystems),
                (|mut t: ResMut<SyncTime>| {
                    if let Some(start) = t.start.take() {
                        t.last = start.elapsed();
                    }
                })
                .after(TilemapCollidersSystems)
                .before(CollisionSystems::Prepare),
            ),
        );
    let world = app.world_mut();
    let map = world.spawn_empty().id();
    let size = TilemapSize { x: SIDE, y: SIDE };
    let mut storage = TileStorage::empty(size);
    for y in 0..SIDE {
        for x in 0..SIDE {
            if solid[(y * SIDE + x) as usize] {
                let position = TilePos { x, y };
                storage.set(&position, world.spawn((position, TilemapId(map))).id());
            }
        }
    }
    let mut rng = Rng(0x00c0_ffee_0000_0002);
    for _ in 0..MOVERS {
        let p = Vec2::new(rng.unit(), rng.unit()) * SIDE as f32;
        let v = Vec2::from_angle(rng.unit() * std::f32::consts::TAU) * 10.0 * rng.unit();
        world.spawn((
            Transform::from_translation(p.extend(0.0)),
            Aabb::new(Vec2::splat(0.4)),
            Velocity(v),
        ));
    }
    world.entity_mut(map).insert((
        storage,
        size,
        TilemapGridSize { x: 1.0, y: 1.0 },
        TilemapTileSize { x: 1.0, y: 1.0 },
        TilemapType::Square,
        Transform::default(),
        TilemapColliders { mode, ..default() },
    ));
    // The first update runs `Startup` with a zero time step; the tick itself runs too.
    (app, map)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The bytes of the collider entities' components (from one collider's archetype) and
/// the map's list of children.
fn collider_bytes(app: &mut App, map: Entity) -> usize {
    let world = app.world_mut();
    let mut q = world.query_filtered::<Entity, With<TileCollider>>();
    let colliders: Vec<Entity> = q.iter(world).collect();
    let per = colliders.first().map_or(0, |&e| {
        world
            .inspect_entity(e)
            .map(|infos| infos.map(|info| info.layout().size()).sum::<usize>())
            .unwrap_or(0)
    });
    let children = world
        .get::<Children>(map)
        .map_or(0, |c| c.len() * size_of::<Entity>());
    colliders.len() * per + children
}

fn run(mode: TileColliderMode, solid: &[bool], solid_cells: &[TilePos]) {
    let (mut app, map) = app(solid, mode);
    let start = Instant::now();
    app.update();
    let first = start.elapsed().as_secs_f64() * 1e3;
    let mut ticks = Vec::new();
    for _ in 0..TICKS {
        let start = Instant::now();
        app.update();
        ticks.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let stats = *app.world().get::<TilemapColliderStats>(map).expect("stats");
    let tree = app.world().resource::<AabbTree>();
    let (tree_bytes, static_nodes) = (tree.bytes(), tree.static_tree_stats().nodes);
    let entity_bytes = collider_bytes(&mut app, map);
    let mut rng = Rng(0x0ed1_7000_0000_0003);
    let (mut remove, mut add, mut sync_remove, mut sync_add, mut replaced) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0usize);
    for _ in 0..EDITS {
        let position = solid_cells[rng.below(solid_cells.len() as u32) as usize];
        let world = app.world_mut();
        let tile = world
            .get_mut::<TileStorage>(map)
            .and_then(|mut s| s.remove(&position));
        if let Some(tile) = tile {
            world.despawn(tile);
        }
        let start = Instant::now();
        app.update();
        remove.push(start.elapsed().as_secs_f64() * 1e3);
        sync_remove.push(app.world().resource::<SyncTime>().last.as_secs_f64() * 1e3);
        replaced += app
            .world()
            .get::<TilemapColliderStats>(map)
            .map_or(0, |s| s.last_edit_replaced);
        let world = app.world_mut();
        let tile = world.spawn((position, TilemapId(map))).id();
        if let Some(mut storage) = world.get_mut::<TileStorage>(map) {
            storage.set(&position, tile);
        }
        let start = Instant::now();
        app.update();
        add.push(start.elapsed().as_secs_f64() * 1e3);
        sync_add.push(app.world().resource::<SyncTime>().last.as_secs_f64() * 1e3);
    }
    println!(
        "{mode:>8?}: colliders {:>7}  static nodes {:>7}  bytes: trees {:>6.2} MB + grid {:>5.2} MB + collider entities {:>6.2} MB = {:>6.2} MB",
        stats.colliders,
        static_nodes,
        tree_bytes as f64 / 1e6,
        stats.grid_bytes as f64 / 1e6,
        entity_bytes as f64 / 1e6,
        (tree_bytes + stats.grid_bytes + entity_bytes) as f64 / 1e6,
    );
    println!(
        "{mode:>8?}: first tick {first:>8.2} ms  later tick (median of {TICKS}) {:>6.3} ms",
        median(ticks.clone())
    );
    println!(
        "{mode:>8?}: edit (median of {EDITS}): remove tick {:>6.3} ms (tile-map system {:>6.1} us), add tick {:>6.3} ms (tile-map system {:>6.1} us), colliders replaced per removal {:.2}",
        median(remove),
        median(sync_remove) * 1e3,
        median(add),
        median(sync_add) * 1e3,
        replaced as f64 / EDITS as f64,
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2);
    let solid = level();
    let solid_cells: Vec<TilePos> = (0..SIDE * SIDE)
        .filter(|&i| solid[i as usize])
        .map(|i| TilePos {
            x: i % SIDE,
            y: i / SIDE,
        })
        .collect();
    println!(
        "map {SIDE} x {SIDE}: {} solid tiles ({:.2} %), {MOVERS} movers; default CollisionConfig",
        solid_cells.len(),
        100.0 * solid_cells.len() as f64 / f64::from(SIDE * SIDE)
    );
    for round in 0..rounds {
        println!("round {}", round + 1);
        let mut modes = [TileColliderMode::PerTile, TileColliderMode::Merged];
        if round % 2 == 1 {
            modes.reverse();
        }
        for mode in modes {
            run(mode, &solid, &solid_cells);
        }
    }
}
