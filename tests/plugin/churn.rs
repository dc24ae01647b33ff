//! Random churn: moves, jumps, despawns, removals, `Disabled`, layers, NaN and spawns, with the entity events checked.

use super::*;

// ---------------------------------------------------------------------------------------
// Random churn: moves, jumps, despawns, removals, Disabled, layers, NaN, spawns

#[derive(Resource)]
pub(crate) struct Churn<V: Dim> {
    pub(crate) rng: Rng,
    pub(crate) entities: Vec<Entity>,
    pub(crate) broken: Vec<(Entity, Vec3)>,
    pub(crate) extent: f32,
    pub(crate) paused: bool,
    pub(crate) _marker: PhantomData<V>,
}

pub(crate) fn spawn_random<V: Dim>(world: &mut World, rng: &mut Rng, extent: f32) -> Entity {
    let t = Transform::from_translation(flat::<V>(rng.vec3(-extent, extent)));
    let mut e = world.spawn(t);
    ColliderSpec::<V>::random(rng).insert(&mut e);
    if let Some(l) = rng.layers() {
        e.insert(l);
    }
    e.id()
}

/// One frame of random changes, straight on the world (observers fire at once).
pub(crate) fn churn<V: Dim>(world: &mut World) {
    world.resource_scope(|world, mut st: Mut<Churn<V>>| {
        let st = &mut *st;
        if st.paused {
            return;
        }
        let extent = st.extent;
        for (e, t) in st.broken.drain(..) {
            if let Some(mut tr) = world.get_mut::<Transform>(e) {
                tr.translation = t;
            }
        }
        for &e in &st.entities {
            let step = flat::<V>(st.rng.vec3(-0.3, 0.3));
            if let Some(mut tr) = world.get_mut::<Transform>(e) {
                tr.translation =
                    (tr.translation + step).clamp(Vec3::splat(-extent), Vec3::splat(extent));
            }
        }
        for _ in 0..st.rng.below(4) {
            let op = st.rng.below(13);
            if op == 6 {
                let e = spawn_random::<V>(world, &mut st.rng, extent);
                st.entities.push(e);
                continue;
            }
            let e = st.entities[st.rng.below(st.entities.len())];
            let Ok(mut em) = world.get_entity_mut(e) else {
                continue;
            };
            let has_box = em.contains::<Aabb<V>>();
            let has_ball = em.contains::<BoundingSphere<V>>();
            match op {
                0 => em.despawn(),
                1 => {
                    em.remove::<Aabb<V>>();
                    em.remove::<BoundingSphere<V>>();
                }
                2 => {
                    if let Some(a) = em.get::<Aabb<V>>().copied() {
                        em.remove::<Aabb<V>>();
                        em.insert(a);
                    }
                    if let Some(s) = em.get::<BoundingSphere<V>>().copied() {
                        em.remove::<BoundingSphere<V>>();
                        em.insert(s);
                    }
                }
                3 => {
                    if em.contains::<Disabled>() {
                        em.remove::<Disabled>();
                    } else {
                        em.insert(Disabled);
                    }
                }
                4 => {
                    if let Some(l) = st.rng.layers() {
                        em.insert(l);
                    } else {
                        em.remove::<CollisionLayers>();
                    }
                }
                5 => {
                    let mut tr = em.get_mut::<Transform>().unwrap();
                    if tr.translation.is_finite() {
                        st.broken.push((e, tr.translation));
                        tr.translation.x = f32::NAN;
                    }
                }
                7 if !has_box && !has_ball => {
                    ColliderSpec::<V>::random(&mut st.rng).insert(&mut em);
                }
                8 if has_box => {
                    em.remove::<Aabb<V>>();
                    em.insert(BoundingSphere::<V>::new(st.rng.range(0.3, 1.5)));
                }
                8 if has_ball => {
                    em.remove::<BoundingSphere<V>>();
                    em.insert(Aabb::new(st.rng.vector::<V>(0.3, 1.5)));
                }
                9 => {
                    let to = flat::<V>(st.rng.vec3(-extent, extent));
                    em.get_mut::<Transform>().unwrap().translation = to;
                    if st.rng.chance(0.5) {
                        em.insert(Teleported);
                    }
                }
                10 if has_box => {
                    em.insert(Aabb::new(st.rng.vector::<V>(0.2, 1.5)));
                }
                10 if has_ball => {
                    em.insert(BoundingSphere::<V>::new(st.rng.range(0.2, 1.5)));
                }
                11 if has_box => {
                    // Invalid until op 10 resizes it.
                    em.insert(Aabb::new(v::<V>(-1.0, 0.5, 0.5)));
                }
                12 => {
                    em.insert(Velocity(st.rng.vector::<V>(-30.0, 30.0)));
                }
                _ => {}
            }
        }
    });
}

pub(crate) fn churn_run<V: Dim>(sched: Sched, fixed_hz: f64, seed: u64, frames: u32) -> Vec<Ev> {
    let mut app = build_app::<V>(sched, fixed_hz, CollisionConfig::default());
    let mut rng = Rng::new(seed);
    let extent = if V::DIM == 2 { 6.0 } else { 3.5 };
    let entities = (0..30)
        .map(|_| spawn_random::<V>(app.world_mut(), &mut rng, extent))
        .collect();
    app.insert_resource(Churn::<V> {
        rng,
        entities,
        broken: Vec::new(),
        extent,
        paused: false,
        _marker: PhantomData,
    });
    match sched {
        Sched::Update => app.add_systems(Update, churn::<V>.before(collect_pre::<V>)),
        Sched::Fixed => app.add_systems(Update, churn::<V>),
    };
    for _ in 0..frames {
        app.update();
    }
    // Changes since the last tick are read at the next one.
    app.world_mut().resource_mut::<Churn<V>>().paused = true;
    run_ticks(&mut app, 1);
    let events = finish::<V>(&app);
    assert!(app.world().resource::<EntityEventLog>().count > events.len());
    let count = |r: EndReason| events.iter().filter(|e| e.reason() == Some(r)).count();
    for r in [
        EndReason::Separated,
        EndReason::Removed,
        EndReason::LayersChanged,
        EndReason::Invalid,
    ] {
        assert!(count(r) > 0, "no {r:?} in {} events", events.len());
    }
    events
}

/// Random lifecycle churn with sweeps on: touching pairs equal brute force after every
/// tick, every start has one end, the tree stays valid; and it is deterministic.
pub(crate) fn churn_update<V: Dim>() {
    let a = churn_run::<V>(Sched::Update, 60.0, 5, 300);
    let b = churn_run::<V>(Sched::Update, 60.0, 5, 300);
    assert_eq!(a, b);
}

/// The same with the default schedule at 20 Hz, the churn in `Update` at 60 Hz: most
/// changes land on frames without a fixed tick.
pub(crate) fn churn_slow_fixed<V: Dim>() {
    churn_run::<V>(Sched::Fixed, 20.0, 6, 450);
}

both_dims!(churn_update, churn_slow_fixed,);
