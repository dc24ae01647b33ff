//! The newer shapes (`RoundedAabb`, `Capsule`) crossed with every contact state and
//! lifecycle change, against an independent `f64` oracle of the exact message sequence.
//!
//! The scene: a partner `P` at the origin (a box, a ball, a capsule along x or a rounded
//! box, each reaching 0.5 along x; moving, or `Static` in the other tree) and a mover `M`
//! (a rounded box or a capsule along y) on the x axis, `0.25` apart, touching exactly (a
//! gap of zero: the test is inclusive) or `0.25` deep. Every value is a multiple of
//! `1/8`, so the plugin's `f32` shapes are exact and the exact touch is no matter of
//! rounding. Then a change: a teleport (to each contact state, on the other side),
//! disabled and enabled, despawned (or its partner), its shape removed leaving a ball, a
//! shape that outranks it inserted, its shape removed and put back, its radius changed
//! (to each contact state).
//!
//! The oracle follows the documented contract: the shape that counts is the first of
//! `Aabb`, `RoundedAabb`, `Capsule`, `BoundingSphere` present; the pair touches when the
//! signed gap of the two rounded boxes ([`signed_gap`], measured in `f64` from the
//! components' values) is at most zero; a collider leaving the trees (despawn, `Disabled`,
//! no shape left) ends its contact with `Removed`, read before the next tick; a teleport
//! ends it with `Teleported` before the tick's starts; a contact the shapes no longer make
//! ends with `Separated`; nothing moves during a tick, so every start is at time 0. The
//! harness checks the rest after every tick: the combined stream replays to the touching
//! pairs, every `CollidingEntities` and the entity events agree, and the tree is valid.

use super::capsules::{Body, Rb, signed_gap};
use super::*;

/// The signed gaps of the three contact states.
const STATES: [(&str, f64); 3] = [("apart", 0.25), ("touching", 0.0), ("overlapping", -0.25)];

/// The partners: each reaches 0.5 along x from the origin.
fn partners<V: Dim>() -> [Body<V>; 4] {
    [
        Body::Box(Aabb::new(V::splat(0.5))),
        Body::Ball(BoundingSphere::new(0.5)),
        Body::Capsule(Capsule::new(0.25, 0.25).along(CapsuleAxis::X)),
        Body::Rounded(RoundedAabb::new(V::splat(0.25), 0.25)),
    ]
}

/// The movers: a rounded box reaching 1 along x, a capsule along y reaching 0.75.
fn movers<V: Dim>() -> [Body<V>; 2] {
    [
        Body::Rounded(RoundedAabb::new(V::splat(0.25), 0.75)),
        Body::Capsule(Capsule::new(0.5, 0.75)),
    ]
}

/// How far the shape reaches from its center along x (no offsets here).
fn reach_x<V: Dim>(body: &Body<V>) -> f64 {
    let rb = body.at(Vec3::ZERO);
    rb.h.x + rb.r
}

/// The rank of a shape: the one of smallest rank counts.
fn rank<V: Dim>(body: &Body<V>) -> u8 {
    match body {
        Body::Box(_) => 0,
        Body::Rounded(_) => 1,
        Body::Capsule(_) => 2,
        Body::Ball(_) => 3,
    }
}

/// The same shape with another radius (a box has none).
fn with_radius<V: Dim>(body: Body<V>, radius: f32) -> Body<V> {
    match body {
        Body::Box(a) => Body::Box(a),
        Body::Ball(mut s) => {
            s.radius = radius;
            Body::Ball(s)
        }
        Body::Capsule(mut c) => {
            c.radius = radius;
            Body::Capsule(c)
        }
        Body::Rounded(mut r) => {
            r.radius = radius;
            Body::Rounded(r)
        }
    }
}

fn radius_of<V: Dim>(body: &Body<V>) -> f32 {
    body.at(Vec3::ZERO).r as f32
}

fn remove_body<V: Dim>(e: &mut EntityWorldMut, body: &Body<V>) {
    match body {
        Body::Box(_) => e.remove::<Aabb<V>>(),
        Body::Ball(_) => e.remove::<BoundingSphere<V>>(),
        Body::Capsule(_) => e.remove::<Capsule<V>>(),
        Body::Rounded(_) => e.remove::<RoundedAabb<V>>(),
    };
}

/// What a game does to the mover between two ticks.
#[derive(Clone, Copy, Debug)]
enum Action<V: Dim> {
    /// A jump to x with `Teleported`, in one insert.
    Teleport(f64),
    Disable,
    Enable,
    Despawn,
    /// The partner despawned.
    DespawnPartner,
    Insert(Body<V>),
    Remove(Body<V>),
    /// The shape's radius written in place (`get_mut`).
    Radius(Body<V>, f32),
}

/// The changes, as the actions before each tick after the first: `(name, extra shape
/// spawned with the mover, frames)`.
type Case<V> = (String, Option<Body<V>>, Vec<Vec<Action<V>>>);

fn changes<V: Dim>(mover: Body<V>, gap: f64) -> Vec<Case<V>> {
    let reach = reach_x(&mover);
    let mut cases = Vec::new();
    for (name, to) in STATES {
        cases.push((
            format!("teleported to {name}"),
            None,
            vec![vec![Action::Teleport(-(reach + 0.5 + to))]],
        ));
    }
    cases.push((
        "disabled, enabled".into(),
        None,
        vec![vec![Action::Disable], vec![Action::Enable]],
    ));
    cases.push(("despawned".into(), None, vec![vec![Action::Despawn]]));
    cases.push((
        "the partner despawned".into(),
        None,
        vec![vec![Action::DespawnPartner]],
    ));
    // A ball 0.25 short of the mover's reach: it touches when the mover is 0.25 deep.
    let ball = Body::Ball(BoundingSphere::new((reach - 0.25) as f32));
    cases.push((
        "shape removed, a ball left".into(),
        Some(ball),
        vec![vec![Action::Remove(mover)]],
    ));
    // A shape that outranks the mover's and reaches 0.25 farther.
    let up = match mover {
        Body::Rounded(_) => Body::Box(Aabb::new(v::<V>((reach + 0.25) as f32, 0.25, 0.25))),
        _ => Body::Rounded(RoundedAabb::new(
            v::<V>((reach + 0.25 - 0.25) as f32, 0.25, 0.25),
            0.25,
        )),
    };
    assert!(rank(&up) < rank(&mover));
    cases.push((
        "a larger shape that outranks it inserted".into(),
        None,
        vec![vec![Action::Insert(up)]],
    ));
    cases.push((
        "shape removed, put back".into(),
        None,
        vec![vec![Action::Remove(mover)], vec![Action::Insert(mover)]],
    ));
    for (name, to) in STATES {
        // A radius larger by `d` closes the gap by `d`.
        let radius = f64::from(radius_of(&mover)) + gap - to;
        cases.push((
            format!("radius changed to {name}"),
            None,
            vec![vec![Action::Radius(mover, radius as f32)]],
        ));
    }
    cases
}

/// The oracle's record of the mover.
struct Model<V: Dim> {
    partner: Rb,
    x: f64,
    shapes: Vec<Body<V>>,
    alive: bool,
    partner_alive: bool,
    enabled: bool,
    teleported: bool,
    /// In the trees at the last tick.
    in_tree: bool,
    open: bool,
    /// `(tick, None)` a start, `(tick, Some(reason))` an end.
    out: Vec<(u32, Option<EndReason>)>,
    /// Entity events: one for each entity that exists when the message is sent.
    entity_events: usize,
}

impl<V: Dim> Model<V> {
    /// The mover `mover` at `x` beside `partner`, both alive and enabled, before the
    /// first tick (nothing in the trees, no pair open).
    fn new(partner: Rb, x: f64, mover: Body<V>) -> Self {
        Self {
            partner,
            x,
            shapes: vec![mover],
            alive: true,
            partner_alive: true,
            enabled: true,
            teleported: false,
            in_tree: false,
            open: false,
            out: Vec::new(),
            entity_events: 0,
        }
    }

    fn counting(&self) -> Option<&Body<V>> {
        self.shapes.iter().min_by_key(|b| rank(*b))
    }

    fn emit(&mut self, tick: u32, reason: Option<EndReason>) {
        self.out.push((tick, reason));
        self.entity_events += usize::from(self.alive) + usize::from(self.partner_alive);
    }

    fn apply(&mut self, action: Action<V>) {
        match action {
            Action::Teleport(x) => {
                self.x = x;
                self.teleported = true;
            }
            Action::Disable => self.enabled = false,
            Action::Enable => self.enabled = true,
            Action::Despawn => self.alive = false,
            Action::DespawnPartner => self.partner_alive = false,
            Action::Insert(b) => {
                self.shapes.retain(|s| rank(s) != rank(&b));
                self.shapes.push(b);
            }
            Action::Remove(b) => self.shapes.retain(|s| rank(s) != rank(&b)),
            Action::Radius(b, r) => {
                for s in &mut self.shapes {
                    if rank(s) == rank(&b) {
                        *s = with_radius(*s, r);
                    }
                }
            }
        }
    }

    fn tick(&mut self, tick: u32) {
        let in_tree = self.alive && self.enabled && !self.shapes.is_empty();
        if !self.partner_alive {
            if self.open {
                self.open = false;
                self.emit(tick, Some(EndReason::Removed));
            }
            return;
        }
        if !in_tree {
            if self.open {
                self.open = false;
                self.emit(tick, Some(EndReason::Removed));
            }
            self.in_tree = false;
            self.teleported = false;
            return;
        }
        if self.teleported && self.in_tree && self.open {
            self.open = false;
            self.emit(tick, Some(EndReason::Teleported));
        }
        self.teleported = false;
        self.in_tree = true;
        let shape = self
            .counting()
            .expect("in the trees")
            .at(Vec3::new(self.x as f32, 0.0, 0.0));
        let touching = signed_gap(&shape, &self.partner) <= 0.0;
        if touching && !self.open {
            self.open = true;
            self.emit(tick, None);
        } else if !touching && self.open {
            self.open = false;
            self.emit(tick, Some(EndReason::Separated));
        }
    }
}

fn act<V: Dim>(app: &mut App, m: Entity, p: Entity, action: Action<V>) {
    let world = app.world_mut();
    match action {
        Action::Teleport(x) => {
            let to = Transform::from_translation(flat::<V>(Vec3::new(x as f32, 0.0, 0.0)));
            world.entity_mut(m).insert((to, Teleported));
        }
        Action::Disable => {
            world.entity_mut(m).insert(Disabled);
        }
        Action::Enable => {
            world.entity_mut(m).remove::<Disabled>();
        }
        Action::Despawn => {
            world.despawn(m);
        }
        Action::DespawnPartner => {
            world.despawn(p);
        }
        Action::Insert(b) => b.insert(&mut world.entity_mut(m)),
        Action::Remove(b) => remove_body(&mut world.entity_mut(m), &b),
        Action::Radius(b, r) => match b {
            Body::Rounded(_) => world.get_mut::<RoundedAabb<V>>(m).unwrap().radius = r,
            Body::Capsule(_) => world.get_mut::<Capsule<V>>(m).unwrap().radius = r,
            Body::Ball(_) => world.get_mut::<BoundingSphere<V>>(m).unwrap().radius = r,
            Body::Box(_) => unreachable!("a box has no radius"),
        },
    }
}

/// Runs one case; returns what differs from the oracle.
fn run_case<V: Dim>(
    mover: Body<V>,
    partner: Body<V>,
    partner_static: bool,
    gap: f64,
    extra: Option<Body<V>>,
    frames: &[Vec<Action<V>>],
) -> Result<(), String> {
    let mut app = update_app::<V>(Sched::Update);
    // The harness's brute force knows boxes and balls only; the oracle here covers all.
    app.world_mut().resource_mut::<Rec>().skip_brute_force = true;
    let x = reach_x(&mover) + reach_x(&partner) + gap;
    let p = app.spawn_id(Transform::default());
    partner.insert(&mut app.world_mut().entity_mut(p));
    if partner_static {
        app.world_mut().entity_mut(p).insert(Static);
    }
    let m = app.spawn_id(Transform::from_translation(flat::<V>(Vec3::new(
        x as f32, 0.0, 0.0,
    ))));
    let mut model = Model::<V>::new(partner.at(Vec3::ZERO), x, mover);
    mover.insert(&mut app.world_mut().entity_mut(m));
    if let Some(b) = extra {
        b.insert(&mut app.world_mut().entity_mut(m));
        model.apply(Action::Insert(b));
    }
    let mut all = vec![vec![]];
    all.extend(frames.iter().cloned());
    all.push(vec![]);
    for (tick, actions) in all.iter().enumerate() {
        for &action in actions {
            act::<V>(&mut app, m, p, action);
            model.apply(action);
        }
        run_ticks(&mut app, 1);
        model.tick(tick as u32);
    }
    let rec = app.world().resource::<Rec>();
    if !rec.errors.is_empty() {
        return Err(format!("harness: {:#?}", rec.errors));
    }
    let got: Vec<(u32, Option<EndReason>)> =
        rec.events.iter().map(|e| (e.tick, e.reason())).collect();
    if got != model.out {
        return Err(format!(
            "messages differ:\n  got      {got:?}\n  expected {:?}",
            model.out
        ));
    }
    if let Some(e) = rec
        .events
        .iter()
        .find(|e| e.pair() != key(m, p) || e.toi().is_some_and(|t| t != 0.0))
    {
        return Err(format!("{e:?}: not the pair's, or a start not at time 0"));
    }
    let seen = app.world().resource::<EntityEventLog>().count;
    if seen != model.entity_events {
        return Err(format!(
            "{seen} entity events, expected {}",
            model.entity_events
        ));
    }
    finish::<V>(&app);
    Ok(())
}

/// The whole matrix: mover × partner (moving, or `Static`: the other tree) × contact
/// state × change.
fn newer_shapes_lifecycle<V: Dim>() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for mover in movers::<V>() {
        for partner in partners::<V>() {
            for partner_static in [false, true] {
                for (state, gap) in STATES {
                    for (change, extra, frames) in changes(mover, gap) {
                        cases += 1;
                        if let Err(e) =
                            run_case::<V>(mover, partner, partner_static, gap, extra, &frames)
                        {
                            failures.push(format!(
                                "{mover:?} against {partner:?} (static: {partner_static}), \
                                 {state}, {change}: {e}"
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

both_dims!(newer_shapes_lifecycle);

/// The oracle against hand-computed cases, so that a wrong oracle cannot pass the matrix
/// by agreeing with a wrong pipeline.
#[test]
fn shape_lifecycle_oracle_hand_cases() {
    type V = Vec2;
    let [rounded, capsule] = movers::<V>();
    assert_eq!(reach_x(&rounded), 1.0);
    assert_eq!(reach_x(&capsule), 0.75);
    for p in partners::<V>() {
        assert_eq!(reach_x(&p), 0.5, "{p:?}");
    }
    let new = |mover: Body<V>, x: f64| {
        Model::<V>::new(
            Body::Ball(BoundingSphere::<V>::new(0.5)).at(Vec3::ZERO),
            x,
            mover,
        )
    };
    // The capsule (reach 0.75) at 1.25 touches the ball (reach 0.5) exactly; teleported
    // to -1.5, 0.25 apart: a start, then the teleport's end and nothing more.
    let mut m = new(capsule, 1.25);
    m.tick(0);
    m.apply(Action::Teleport(-1.5));
    m.tick(1);
    assert_eq!(m.out, [(0, None), (1, Some(EndReason::Teleported))]);
    // Teleported in place while touching: the end, then the start again, in one tick.
    let mut m = new(capsule, 1.25);
    m.tick(0);
    m.apply(Action::Teleport(1.25));
    m.tick(1);
    assert_eq!(
        m.out,
        [(0, None), (1, Some(EndReason::Teleported)), (1, None)]
    );
    // The rounded box 0.25 apart (at 1.75); its radius from 0.75 to 1.0 closes the gap.
    let mut m = new(rounded, 1.75);
    m.tick(0);
    m.apply(Action::Radius(rounded, 1.0));
    m.tick(1);
    m.apply(Action::Radius(rounded, 0.5));
    m.tick(2);
    assert_eq!(m.out, [(1, None), (2, Some(EndReason::Separated))]);
    // Touching, with a ball of radius 0.75 (the rounded box's reach less 0.25): its
    // rounded box removed, the ball counts and is 0.25 apart.
    let mut m = new(rounded, 1.5);
    m.apply(Action::Insert(Body::Ball(BoundingSphere::new(0.75))));
    m.tick(0);
    m.apply(Action::Remove(rounded));
    m.tick(1);
    assert_eq!(m.out, [(0, None), (1, Some(EndReason::Separated))]);
    assert_eq!(m.entity_events, 4);
    // Despawned while touching: one end, its entity event to the partner alone.
    let mut m = new(rounded, 1.5);
    m.tick(0);
    m.apply(Action::Despawn);
    m.tick(1);
    assert_eq!(m.out, [(0, None), (1, Some(EndReason::Removed))]);
    assert_eq!(m.entity_events, 3);
}
