//! Every change a game makes between ticks, crossed with the collider's contact state
//! before it and its motion after it, against an independent model of the event contract.
//!
//! The scene is one line: a mover `M` (a box of half extent 0.1) on the x axis, a thin
//! `Static` wall `W` at x = 0 and a thin moving-tree target `T` at x = 2 (both of half
//! width 0.05). Every contact is then an interval test in one dimension, and the model
//! below computes, in `f64`, which messages each tick must carry: their kinds, reasons,
//! times of impact and their place in the tick's order (ends of contacts broken between
//! ticks, ends of contacts broken before the tick's motion, starts earliest first, the
//! tick's other ends). The harness checks the rest after every tick: the combined stream
//! replays to the touching pairs, every `CollidingEntities` and the entity events agree,
//! and the trees are valid.
//!
//! The mover is each kind of shape in turn (a box, a ball, a capsule along y, one along x
//! and a rounded box), every one reaching `M_HALF` along x and less than the wall's half
//! height across it: against the flat faces of the thin boxes every kind touches where the
//! box does, so one model serves them all.

use super::*;

/// Half width of the mover along x.
const M_HALF: f64 = 0.1;
/// Half width of the wall and the target along x.
const THIN: f64 = 0.05;
const WALL_X: f64 = 0.0;
const TARGET_X: f64 = 2.0;
/// Where a teleport puts the mover: clear of everything.
const TELEPORT_X: f64 = -3.0;
/// The parent a re-parented mover goes under stands here.
const PARENT_X: f64 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Before {
    /// At x = -1, touching nothing.
    Apart,
    /// At x = 0, inside the wall.
    Touching,
    /// Moved from -1 to 1 in the last tick: it passed through the wall.
    PassedThrough,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum After {
    Still,
    /// 0.05 along x.
    Slow,
    /// 4 along x: through whatever lies ahead.
    Through,
}

impl After {
    fn dx(self) -> f64 {
        match self {
            After::Still => 0.0,
            After::Slow => 0.05,
            After::Through => 4.0,
        }
    }
}

/// What a game does to the mover between two ticks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    /// Moves it along x (a write of its `Transform`).
    Move(f64),
    /// A jump to x with `Teleported`, in one insert.
    Teleport(f64),
    /// `Teleported` inserted without moving.
    TeleportInPlace,
    Disable,
    Enable,
    /// A shape of another kind and the same reach inserted ([`MoverShape::swapped`]),
    /// then the mover's own removed.
    SwapShape,
    RemoveShape,
    InsertShape,
    LayersNone,
    LayersBack,
    StaticOn,
    StaticOff,
    SensorOn,
    SensorOff,
    /// Under a parent at [`PARENT_X`], its local transform kept.
    Reparent,
    Despawn,
    RemoveTracked,
    /// `CollisionConfig` written (a larger margin).
    Config,
}

/// A change and the frames it takes: actions before each of the ticks that follow the
/// contact state; `None` in place of the motion stands for the case's motion after.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Change {
    Teleport,
    TeleportInPlace,
    DisableEnable,
    TeleportWhileDisabled,
    ShapeSwap,
    ShapeRemovedInserted,
    Layers,
    StaticOnOff,
    SensorOnOff,
    Reparent,
    Despawn,
    TrackedRemoved,
    Config,
}

const CHANGES: [Change; 13] = [
    Change::Teleport,
    Change::TeleportInPlace,
    Change::DisableEnable,
    Change::TeleportWhileDisabled,
    Change::ShapeSwap,
    Change::ShapeRemovedInserted,
    Change::Layers,
    Change::StaticOnOff,
    Change::SensorOnOff,
    Change::Reparent,
    Change::Despawn,
    Change::TrackedRemoved,
    Change::Config,
];

impl Change {
    /// The actions before each tick, the motion after given as `dx`.
    fn frames(self, dx: f64) -> Vec<Vec<Action>> {
        use Action::*;
        let motion = Move(dx);
        match self {
            Change::Teleport => vec![vec![Teleport(TELEPORT_X), motion]],
            Change::TeleportInPlace => vec![vec![TeleportInPlace, motion]],
            Change::DisableEnable => vec![vec![Disable, motion], vec![Enable]],
            Change::TeleportWhileDisabled => vec![
                vec![Disable],
                vec![Teleport(TELEPORT_X), motion],
                vec![Move(1.0), Enable],
            ],
            Change::ShapeSwap => vec![vec![SwapShape, motion]],
            Change::ShapeRemovedInserted => vec![vec![RemoveShape, InsertShape, motion]],
            Change::Layers => vec![vec![LayersNone, motion], vec![LayersBack]],
            Change::StaticOnOff => vec![vec![StaticOn, motion], vec![StaticOff]],
            Change::SensorOnOff => vec![vec![SensorOn, motion], vec![SensorOff]],
            Change::Reparent => vec![vec![Reparent, motion]],
            Change::Despawn => vec![vec![Despawn, motion]],
            Change::TrackedRemoved => vec![vec![RemoveTracked, motion]],
            Change::Config => vec![vec![Config, motion]],
        }
    }
}

/// Where in a tick's order a message belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    /// Ends of contacts broken between ticks, delivered at once.
    Between,
    /// Ends of contacts broken before the tick's motion.
    Broken,
    Starts,
    /// The tick's other ends.
    Tested,
}

#[derive(Clone, Copy, Debug)]
struct Expected {
    tick: u32,
    group: Group,
    partner: usize,
    /// `None` for a start.
    reason: Option<EndReason>,
    toi: f64,
}

/// Where the mover's next sweep starts when it (re)enters the trees.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// At the place recorded then.
    From(f64),
    Unswept,
}

/// The contract, for the mover against the wall (partner 0) and the target (partner 1).
struct Model {
    x: f64,
    /// Where the next sweep starts: the last tick's place, a recorded start, or the place
    /// itself (unswept).
    from: f64,
    in_tree: bool,
    /// Out of the trees and coming back at the next tick, from there.
    entry: Option<Entry>,
    disabled: bool,
    has_shape: bool,
    gone: bool,
    teleported: bool,
    layers: bool,
    is_static: bool,
    open: [bool; 2],
    out: Vec<Expected>,
}

const PARTNERS: [(f64, bool); 2] = [(WALL_X, true), (TARGET_X, false)];

fn overlaps(x: f64, c: f64) -> bool {
    (x - c).abs() <= M_HALF + THIN
}

/// First time in [0, 1] at which the mover going from `x0` to `x1` touches the partner
/// at `c`.
fn first_touch(x0: f64, x1: f64, c: f64) -> Option<f64> {
    if overlaps(x0, c) {
        return Some(0.0);
    }
    let reach = M_HALF + THIN;
    let d = x1 - x0;
    if d == 0.0 {
        return None;
    }
    // The near face: the side of the partner the mover starts on.
    let target = if x0 < c { c - reach } else { c + reach };
    let t = (target - x0) / d;
    (0.0..=1.0).contains(&t).then_some(t)
}

impl Model {
    fn new(x: f64) -> Self {
        Self {
            x,
            from: x,
            in_tree: false,
            entry: Some(Entry::From(x)),
            disabled: false,
            has_shape: true,
            gone: false,
            teleported: false,
            layers: true,
            is_static: false,
            open: [false; 2],
            out: Vec::new(),
        }
    }

    fn end_all(&mut self, tick: u32, group: Group, reason: EndReason) {
        for p in 0..2 {
            if self.open[p] {
                self.open[p] = false;
                self.out.push(Expected {
                    tick,
                    group,
                    partner: p,
                    reason: Some(reason),
                    toi: 0.0,
                });
            }
        }
    }

    /// Takes the mover out of the trees between ticks (read at `tick`).
    fn leave(&mut self, tick: u32) {
        if self.in_tree {
            self.end_all(tick, Group::Between, EndReason::Removed);
            self.in_tree = false;
        }
        self.entry = None;
        self.teleported = false;
    }

    /// An action before tick `tick`.
    fn apply(&mut self, tick: u32, action: Action) {
        match action {
            Action::Move(dx) => self.x += dx,
            Action::Teleport(x) => {
                self.x = x;
                if !self.disabled {
                    self.teleported = true;
                    self.from = x;
                }
            }
            Action::TeleportInPlace => {
                self.teleported = true;
                self.from = self.x;
            }
            Action::Disable => {
                self.leave(tick);
                self.disabled = true;
            }
            Action::Enable => {
                self.disabled = false;
                self.entry = Some(Entry::Unswept);
            }
            Action::SwapShape | Action::SensorOn | Action::SensorOff | Action::Config => {}
            Action::RemoveShape => {
                self.leave(tick);
                self.has_shape = false;
            }
            Action::InsertShape => {
                self.has_shape = true;
                self.entry = Some(Entry::From(self.x));
            }
            Action::LayersNone => self.layers = false,
            Action::LayersBack => self.layers = true,
            Action::StaticOn => self.is_static = true,
            Action::StaticOff => self.is_static = false,
            Action::Reparent => self.x += PARENT_X,
            Action::Despawn => {
                self.leave(tick);
                self.gone = true;
            }
            Action::RemoveTracked => {
                self.leave(tick);
                self.entry = Some(Entry::Unswept);
            }
        }
    }

    /// The tick `tick` itself.
    fn tick(&mut self, tick: u32) {
        if self.gone || self.disabled || !self.has_shape {
            return;
        }
        if !self.in_tree {
            self.in_tree = true;
            self.from = match self.entry.take() {
                Some(Entry::From(x)) => x,
                _ => self.x,
            };
        } else if self.teleported {
            self.end_all(tick, Group::Broken, EndReason::Teleported);
        }
        self.teleported = false;
        for (p, &(c, partner_static)) in PARTNERS.iter().enumerate() {
            let both_static = self.is_static && partner_static;
            if both_static {
                if self.open[p] {
                    self.open[p] = false;
                    self.out.push(Expected {
                        tick,
                        group: Group::Broken,
                        partner: p,
                        reason: Some(EndReason::BothStatic),
                        toi: 0.0,
                    });
                }
                continue;
            }
            let now = overlaps(self.x, c);
            if self.open[p] {
                let reason = if !self.layers {
                    EndReason::LayersChanged
                } else if !now {
                    EndReason::Separated
                } else {
                    continue;
                };
                self.open[p] = false;
                self.out.push(Expected {
                    tick,
                    group: Group::Tested,
                    partner: p,
                    reason: Some(reason),
                    toi: 0.0,
                });
            } else if self.layers
                && let Some(toi) = first_touch(self.from, self.x, c)
            {
                self.out.push(Expected {
                    tick,
                    group: Group::Starts,
                    partner: p,
                    reason: None,
                    toi,
                });
                if now {
                    self.open[p] = true;
                } else {
                    self.out.push(Expected {
                        tick,
                        group: Group::Tested,
                        partner: p,
                        reason: Some(EndReason::PassedThrough),
                        toi: 0.0,
                    });
                }
            }
        }
        self.from = self.x;
    }
}

/// The mover's shape, each kind reaching [`M_HALF`] along x.
#[derive(Clone, Copy, Debug, PartialEq)]
enum MoverShape {
    Box,
    Ball,
    /// Radius `M_HALF`, standing along y (0.4 tall on each side of its center).
    CapsuleY,
    /// Lying along x: half length and radius `M_HALF / 2`.
    CapsuleX,
    /// Inner half extents `0.75 * M_HALF`, rounded by `0.25 * M_HALF`.
    Rounded,
}

const MOVER_SHAPES: [MoverShape; 5] = [
    MoverShape::Box,
    MoverShape::Ball,
    MoverShape::CapsuleY,
    MoverShape::CapsuleX,
    MoverShape::Rounded,
];

impl MoverShape {
    /// Inserts this shape's component.
    fn insert<V: Dim>(self, entity: &mut EntityWorldMut) {
        let half = M_HALF as f32;
        match self {
            MoverShape::Box => entity.insert(Aabb::<V>::new(V::splat(half))),
            MoverShape::Ball => entity.insert(BoundingSphere::<V>::new(half)),
            MoverShape::CapsuleY => entity.insert(Capsule::<V>::new(0.3, half)),
            MoverShape::CapsuleX => {
                entity.insert(Capsule::<V>::new(half / 2.0, half / 2.0).along(CapsuleAxis::X))
            }
            MoverShape::Rounded => {
                entity.insert(RoundedAabb::<V>::new(V::splat(0.75 * half), 0.25 * half))
            }
        };
    }

    /// Removes this shape's component (and only it).
    fn remove<V: Dim>(self, entity: &mut EntityWorldMut) {
        match self {
            MoverShape::Box => entity.remove::<Aabb<V>>(),
            MoverShape::Ball => entity.remove::<BoundingSphere<V>>(),
            MoverShape::CapsuleY | MoverShape::CapsuleX => entity.remove::<Capsule<V>>(),
            MoverShape::Rounded => entity.remove::<RoundedAabb<V>>(),
        };
    }

    /// The kind a swap puts in its place: another component, so that both are on the
    /// mover for a moment.
    fn swapped(self) -> MoverShape {
        match self {
            MoverShape::Box => MoverShape::Ball,
            MoverShape::Ball => MoverShape::CapsuleY,
            MoverShape::CapsuleY => MoverShape::Rounded,
            MoverShape::CapsuleX => MoverShape::Box,
            MoverShape::Rounded => MoverShape::CapsuleX,
        }
    }
}

fn at<V: Dim>(x: f64) -> Transform {
    Transform::from_translation(V::truncate_from_3d(Vec3::new(x as f32, 0.0, 0.0)).extend_to_3d())
}

/// Applies `action` to the mover in the world; `shape` is the mover's shape, which a swap
/// changes.
fn act<V: Dim>(app: &mut App, m: Entity, shape: &mut MoverShape, action: Action) {
    let world = app.world_mut();
    match action {
        Action::Move(dx) => {
            if let Some(mut t) = world.get_mut::<Transform>(m) {
                t.translation.x += dx as f32;
            }
        }
        Action::Teleport(x) => {
            if let Ok(mut e) = world.get_entity_mut(m) {
                e.insert((at::<V>(x), Teleported));
            }
        }
        Action::TeleportInPlace => {
            world.entity_mut(m).insert(Teleported);
        }
        Action::Disable => {
            world.entity_mut(m).insert(Disabled);
        }
        Action::Enable => {
            world.entity_mut(m).remove::<Disabled>();
        }
        Action::SwapShape => {
            let mut entity = world.entity_mut(m);
            let new = shape.swapped();
            new.insert::<V>(&mut entity);
            shape.remove::<V>(&mut entity);
            *shape = new;
        }
        Action::RemoveShape => {
            shape.remove::<V>(&mut world.entity_mut(m));
        }
        Action::InsertShape => {
            shape.insert::<V>(&mut world.entity_mut(m));
        }
        Action::LayersNone => {
            world.entity_mut(m).insert(CollisionLayers::NONE);
        }
        Action::LayersBack => {
            world.entity_mut(m).remove::<CollisionLayers>();
        }
        Action::StaticOn => {
            world.entity_mut(m).insert(Static);
        }
        Action::StaticOff => {
            world.entity_mut(m).remove::<Static>();
        }
        Action::SensorOn => {
            world.entity_mut(m).insert(Sensor);
        }
        Action::SensorOff => {
            world.entity_mut(m).remove::<Sensor>();
        }
        Action::Reparent => {
            let parent = world.spawn(at::<V>(PARENT_X)).id();
            world.entity_mut(m).insert(ChildOf(parent));
            world.resource_mut::<Rec>().skip_brute_force = true;
        }
        Action::Despawn => {
            world.despawn(m);
        }
        Action::RemoveTracked => {
            world.entity_mut(m).remove::<TrackedCollider<V>>();
        }
        Action::Config => {
            world.resource_mut::<CollisionConfig>().margin = 0.3;
        }
    }
}

/// The order of a pair in the messages: by index, then generation, the entity of smaller
/// index first.
fn pair_order(a: Entity, b: Entity) -> ((u32, u32), (u32, u32)) {
    let o = |e: Entity| (e.index_u32(), e.generation().to_bits());
    let (x, y) = (o(a), o(b));
    if x <= y { (x, y) } else { (y, x) }
}

/// Runs one case; returns what differs from the model.
fn run_case<V: Dim>(
    mut shape: MoverShape,
    change: Change,
    before: Before,
    after: After,
    statics: StaticChangeDetection,
) -> Result<(), String> {
    let config = CollisionConfig {
        static_changes: statics,
        ..default()
    };
    let mut app = build_app::<V>(Sched::Update, 60.0, config);
    let thin = Aabb::<V>::new(v::<V>(THIN as f32, 1.0, 1.0));
    let world = app.world_mut();
    let wall = world.spawn((at::<V>(WALL_X), thin, Static)).id();
    let target = world.spawn((at::<V>(TARGET_X), thin)).id();
    let x0 = match before {
        Before::Touching => 0.0,
        Before::Apart | Before::PassedThrough => -1.0,
    };
    let mut mover = world.spawn(at::<V>(x0));
    shape.insert::<V>(&mut mover);
    let m = mover.id();
    let mut model = Model::new(x0);
    let mut frames: Vec<Vec<Action>> = vec![
        vec![],
        if before == Before::PassedThrough {
            vec![Action::Move(2.0)]
        } else {
            vec![]
        },
    ];
    frames.extend(change.frames(after.dx()));
    frames.push(vec![]);
    for (tick, actions) in frames.iter().enumerate() {
        let tick = tick as u32;
        for &action in actions {
            act::<V>(&mut app, m, &mut shape, action);
            model.apply(tick, action);
        }
        run_ticks(&mut app, 1);
        model.tick(tick);
    }
    let rec = app.world().resource::<Rec>();
    if !rec.errors.is_empty() {
        return Err(format!("harness: {:#?}", rec.errors));
    }
    let partners = [wall, target];
    let mut expected = model.out.clone();
    expected.sort_by(|x, y| {
        (x.tick, x.group)
            .cmp(&(y.tick, y.group))
            .then(x.toi.total_cmp(&y.toi))
            .then_with(|| {
                pair_order(m, partners[x.partner]).cmp(&pair_order(m, partners[y.partner]))
            })
    });
    let actual = &rec.events;
    let same = actual.len() == expected.len()
        && actual.iter().zip(&expected).all(|(a, e)| {
            a.tick == e.tick
                && a.pair() == key(m, partners[e.partner])
                && a.reason() == e.reason
                && a.toi()
                    .is_none_or(|toi| (f64::from(toi) - e.toi).abs() < 1e-4)
        });
    if !same {
        let name = |e: Entity| {
            if e == wall {
                "W"
            } else if e == target {
                "T"
            } else {
                "M"
            }
        };
        let show_actual: Vec<String> = actual
            .iter()
            .map(|a| {
                format!(
                    "t{} {}-{} {:?} {:?}",
                    a.tick,
                    name(a.entity),
                    name(a.other),
                    a.reason(),
                    a.toi()
                )
            })
            .collect();
        let show_expected: Vec<String> = expected
            .iter()
            .map(|e| {
                format!(
                    "t{} M-{} {:?} {:?} ({:?})",
                    e.tick,
                    ["W", "T"][e.partner],
                    e.reason,
                    e.toi,
                    e.group
                )
            })
            .collect();
        return Err(format!(
            "messages differ from the model:\n  got      {show_actual:?}\n  expected {show_expected:?}"
        ));
    }
    finish::<V>(&app);
    Ok(())
}

/// The whole matrix: every mover shape × change × contact state × motion ×
/// `StaticChangeDetection` mode.
fn lifecycle_model<V: Dim>() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for (shape, change) in MOVER_SHAPES
        .into_iter()
        .flat_map(|shape| CHANGES.map(|change| (shape, change)))
    {
        for before in [Before::Apart, Before::Touching, Before::PassedThrough] {
            for after in [After::Still, After::Slow, After::Through] {
                for statics in [StaticChangeDetection::Scan, StaticChangeDetection::OnInsert] {
                    cases += 1;
                    if let Err(e) = run_case::<V>(shape, change, before, after, statics) {
                        failures.push(format!(
                            "{shape:?} {change:?} {before:?} {after:?} {statics:?}: {e}"
                        ));
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

both_dims!(lifecycle_model);

/// The model itself against hand-computed cases, so that a wrong model cannot pass the
/// matrix by agreeing with a wrong pipeline.
#[test]
fn model_hand_cases() {
    // From -1 to 3: the wall's near face is reached after 0.85 of 4, the target's after
    // 2.85 of 4.
    assert_eq!(first_touch(-1.0, 3.0, WALL_X), Some(0.85 / 4.0));
    assert_eq!(first_touch(-1.0, 3.0, TARGET_X), Some(2.85 / 4.0));
    assert_eq!(first_touch(-1.0, -0.95, WALL_X), None);
    assert_eq!(first_touch(0.05, 4.05, WALL_X), Some(0.0));
    // The bullet: in the wall, teleported to -3, then 4 along x through it.
    let mut model = Model::new(0.0);
    model.tick(0);
    model.apply(1, Action::Teleport(TELEPORT_X));
    model.apply(1, Action::Move(4.0));
    model.tick(1);
    let got: Vec<(u32, usize, Option<EndReason>)> = model
        .out
        .iter()
        .map(|e| (e.tick, e.partner, e.reason))
        .collect();
    assert_eq!(
        got,
        [
            (0, 0, None),
            (1, 0, Some(EndReason::Teleported)),
            (1, 0, None),
            (1, 0, Some(EndReason::PassedThrough)),
        ]
    );
    // Disabled, teleported while out, moved on and enabled: back unswept at x = 2,
    // touching the target only.
    let mut model = Model::new(-1.0);
    model.tick(0);
    model.apply(1, Action::Disable);
    model.tick(1);
    model.apply(2, Action::Teleport(TELEPORT_X));
    model.apply(2, Action::Move(4.0));
    model.tick(2);
    model.apply(3, Action::Move(1.0));
    model.apply(3, Action::Enable);
    model.tick(3);
    let got: Vec<(u32, usize, Option<EndReason>, f64)> = model
        .out
        .iter()
        .map(|e| (e.tick, e.partner, e.reason, e.toi))
        .collect();
    assert_eq!(got, [(3, 1, None, 0.0)]);
}
