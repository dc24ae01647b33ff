//! Spatial queries (`SpatialQuery`) against an `f64` oracle on random scenes.

use super::*;

pub(crate) fn accepts(layers: Option<CollisionLayers>, e: Entity, filter: &QueryFilter) -> bool {
    layers.map_or(u32::MAX, |l| l.memberships) & filter.mask != 0 && !filter.excluded.contains(&e)
}

pub(crate) fn random_filter(rng: &mut Rng, entities: &[Entity]) -> QueryFilter {
    let mut filter = QueryFilter::default();
    if rng.chance(0.5) {
        filter = filter.with_mask(rng.below(8) as u32);
    }
    let excluded: Vec<Entity> = (0..rng.below(4))
        .map(|_| entities[rng.below(entities.len())])
        .collect();
    filter.excluding(excluded)
}

// ---------------------------------------------------------------------------------------
// Spatial queries against the f64 oracle
//
// Every query of `SpatialQuery` on random scenes (rotated, scaled, offset colliders with
// layers), with random filters, directions of random length (zero, tiny, about one, huge)
// and random ranges (zero, finite, infinite). The oracle (`tests/kit/oracle.rs`) computes in
// `f64` with its own formulas and brackets each answer with a tolerance `QUERY_EPS`: what a
// query must return is what it reaches with every target shrunk by the tolerance; what it
// returns must be within the tolerance of touching. Each result's `t`, `point` and
// `normal` are checked, and the cases the bracket leaves open are counted and bounded.

use bevy::math::DVec3;

use crate::exact::{
    Solid, first_contact, first_contact_ball, random_direction, random_max_t, ray_entry,
    surface_normals,
};

/// The oracle's distance tolerance (world units; the scenes span tens of units).
pub(crate) const QUERY_EPS: f64 = 1e-3;

pub(crate) fn solid(s: &OShape) -> Solid {
    match *s {
        OShape::Box { min, max } => Solid::Box {
            min: min.as_dvec3(),
            max: max.as_dvec3(),
        },
        OShape::Ball { center, radius } => Solid::Ball {
            center: center.as_dvec3(),
            radius: f64::from(radius),
        },
        OShape::Rounded { .. } => s.solid(),
    }
}

pub(crate) fn dvec<V: Dim>(p: V) -> DVec3 {
    p.extend_to_3d().as_dvec3()
}

/// How many results each kind of query was checked on, and the open cases.
#[derive(Debug, Default)]
pub(crate) struct QueryChecks {
    pub(crate) hits: BTreeMap<&'static str, usize>,
    pub(crate) normals: usize,
    pub(crate) open: usize,
    pub(crate) decided: usize,
}

/// A moving box (`half` zero for a ray) or ball (`radius` given) and what it is checked
/// against.
pub(crate) struct Sweep<'a> {
    pub(crate) what: &'a str,
    pub(crate) kind: &'static str,
    pub(crate) origin: DVec3,
    pub(crate) half: DVec3,
    pub(crate) radius: Option<f64>,
    pub(crate) direction: DVec3,
    pub(crate) max_t: f64,
    pub(crate) candidates: &'a [(Entity, Solid)],
}

impl Sweep<'_> {
    /// First contact with `s` within the range: the ray's own slab test or quadratic, the
    /// box's or the ball's first-contact search.
    pub(crate) fn first(&self, s: Solid) -> Option<f64> {
        if let Some(r) = self.radius {
            first_contact_ball(self.origin, r, self.direction, s, self.max_t, 0.0)
        } else if self.half == DVec3::ZERO {
            ray_entry(self.origin, self.direction, s, self.max_t)
        } else {
            first_contact(self.origin, self.half, self.direction, s, self.max_t, 0.0)
        }
    }

    /// Distance from the moving shape centered on `center` to `s`.
    pub(crate) fn gap(&self, s: Solid, center: DVec3) -> f64 {
        match self.radius {
            Some(r) => s.distance_to_ball(center, r),
            None => s.distance_to_box(center, self.half),
        }
    }

    /// The candidates a query must reach, with the parameter at which it certainly does.
    pub(crate) fn certain(&self) -> Vec<(Entity, f64)> {
        self.candidates
            .iter()
            .filter_map(|(e, s)| Some((*e, self.first(s.shrunk(QUERY_EPS))?)))
            .collect()
    }

    /// One returned hit: a candidate, in range, touching its target at `t` (within the
    /// tolerance), not later than where the target's shrunk shape is reached; `point` the
    /// moving center at `t`; `normal` zero when the sweep starts inside, else the outward
    /// normal of the surface touched; `contact` in both the target and the moving shape at
    /// `t`.
    pub(crate) fn check_hit<V: Dim>(&self, hit: &ShapeHit<V>, checks: &mut QueryChecks) {
        let what = format!("{} {}: {hit:?}", self.kind, self.what);
        let Some((_, s)) = self.candidates.iter().find(|(e, _)| *e == hit.entity) else {
            panic!("{what}: not a candidate (filtered out or no valid shape)");
        };
        let s = *s;
        let t = f64::from(hit.t);
        assert!(t >= 0.0 && t <= self.max_t, "{what}: t out of range");
        let center = self.origin + self.direction * t;
        let gap = self.gap(s, center);
        assert!(gap <= QUERY_EPS, "{what}: {gap} away from its target at t");
        if let Some(sure) = self.first(s.shrunk(QUERY_EPS)) {
            assert!(t <= sure * (1.0 + 1e-6), "{what}: later than {sure}");
        }
        let scale = 1.0 + self.origin.length() + (self.direction * t).length();
        assert!(
            dvec(hit.point).distance(center) <= 1e-5 * scale,
            "{what}: point, the oracle's {center}"
        );
        let contact = dvec(hit.contact);
        let on_target = s.distance_to_point(contact);
        let on_mover = match self.radius {
            Some(r) => (contact.distance(center) - r).max(0.0),
            None => Solid::Box {
                min: center - self.half,
                max: center + self.half,
            }
            .distance_to_point(contact),
        };
        assert!(
            on_target <= QUERY_EPS && on_mover <= QUERY_EPS,
            "{what}: contact {on_target} from the target, {on_mover} from the moving shape"
        );
        let normal = dvec(hit.normal);
        if self.gap(s.shrunk(QUERY_EPS), self.origin) == 0.0 {
            assert_eq!(t, 0.0, "{what}: starts inside");
            assert_eq!(normal, DVec3::ZERO, "{what}: starts inside, zero normal");
        } else if self.gap(s, self.origin) > QUERY_EPS {
            // A moving ball: from the target's point closest to the ball's center to the
            // center (a point, radius zero: the faces of a box it lies on). A moving box
            // against a box: its center lies on a face of the target grown by the moving
            // box (their Minkowski sum); against a ball: the radial direction at the point
            // of the moving box closest to the ball's center.
            let want = match (self.radius, s) {
                (Some(r), Solid::Box { .. }) => {
                    let q = s.closest_point(center);
                    if r > 0.0 {
                        vec![(center - q).normalize()]
                    } else {
                        surface_normals(s, q, 2.0 * QUERY_EPS)
                    }
                }
                (Some(_), Solid::Ball { .. }) => surface_normals(s, center, 0.0),
                (None, Solid::Box { min, max }) => surface_normals(
                    Solid::Box {
                        min: min - self.half,
                        max: max + self.half,
                    },
                    center,
                    2.0 * QUERY_EPS,
                ),
                (None, Solid::Ball { center: c, .. }) => {
                    surface_normals(s, c.clamp(center - self.half, center + self.half), 0.0)
                }
            };
            assert!(
                want.iter().any(|n| n.distance(normal) <= 1e-2
                    && n.dot(self.direction) <= 1e-6 * self.direction.length()),
                "{what}: normal, the oracle's {want:?} (target {s:?})"
            );
            checks.normals += 1;
        } else {
            checks.open += 1;
        }
        *checks.hits.entry(self.kind).or_default() += 1;
    }

    /// The closest hit: none only when no candidate is certainly reached; else a valid
    /// hit no later than any candidate's certain contact.
    pub(crate) fn check_closest<V: Dim>(&self, got: Option<ShapeHit<V>>, checks: &mut QueryChecks) {
        let certain = self.certain();
        match got {
            None => assert!(
                certain.is_empty(),
                "{} {}: missed {certain:?}",
                self.kind,
                self.what
            ),
            Some(hit) => {
                self.check_hit(&hit, checks);
                let t = f64::from(hit.t);
                for (e, sure) in &certain {
                    assert!(
                        t <= sure * (1.0 + 1e-6),
                        "{} {}: {hit:?}, but {e} is reached at {sure}",
                        self.kind,
                        self.what
                    );
                }
            }
        }
    }

    /// Every hit: each a valid hit, once, nearest first, and every candidate certainly
    /// reached among them.
    pub(crate) fn check_all<V: Dim>(&self, hits: &[ShapeHit<V>], checks: &mut QueryChecks) {
        for hit in hits {
            self.check_hit(hit, checks);
        }
        let got: BTreeSet<Entity> = hits.iter().map(|h| h.entity).collect();
        assert_eq!(
            got.len(),
            hits.len(),
            "{} {}: duplicates",
            self.kind,
            self.what
        );
        assert!(
            hits.windows(2).all(|w| w[0].t <= w[1].t),
            "{} {}: nearest first",
            self.kind,
            self.what
        );
        for (e, sure) in self.certain() {
            assert!(
                got.contains(&e),
                "{} {}: {e} reached at {sure} is missing from {hits:?}",
                self.kind,
                self.what
            );
        }
    }
}

/// An overlap query's answer: every candidate certainly overlapped (`distance` to its
/// shrunk shape within `reach - QUERY_EPS`, or zero), none further than `reach +
/// QUERY_EPS`; the rest are open and counted.
pub(crate) fn check_overlaps(
    what: &str,
    got: &[Entity],
    candidates: &[(Entity, Solid)],
    distance: impl Fn(Solid) -> f64,
    reach: f64,
    checks: &mut QueryChecks,
    kind: &'static str,
) {
    let set: BTreeSet<Entity> = got.iter().copied().collect();
    assert_eq!(set.len(), got.len(), "{kind} {what}: duplicates");
    for e in &set {
        assert!(
            candidates.iter().any(|(c, _)| c == e),
            "{kind} {what}: {e} is not a candidate"
        );
    }
    for (e, s) in candidates {
        let certain = distance(s.shrunk(QUERY_EPS)) <= (reach - QUERY_EPS).max(0.0);
        let outside = distance(*s) > reach + QUERY_EPS;
        if certain {
            assert!(set.contains(e), "{kind} {what}: {e} ({s:?}) missing");
            checks.decided += 1;
        } else if outside {
            assert!(!set.contains(e), "{kind} {what}: {e} ({s:?}) is too far");
            checks.decided += 1;
        } else {
            checks.open += 1;
        }
    }
    *checks.hits.entry(kind).or_default() += set.len();
}

/// Orders results the same way whatever the order they came in.
pub(crate) trait ResultOrder: Clone + std::fmt::Debug + PartialEq {
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering;
}

impl ResultOrder for Entity {
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.cmp(b)
    }
}

impl<V: Dim> ResultOrder for ShapeHit<V> {
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.t.total_cmp(&b.t).then(a.entity.cmp(&b.entity))
    }
}

/// A `_with` form against its `Vec` form: the same results (in any order), and a callback
/// that returns `false` is called once, or never when there is nothing to find.
pub(crate) fn same_as_with<T: ResultOrder>(
    what: &str,
    kind: &str,
    vec_form: &[T],
    with_form: impl Fn(&mut dyn FnMut(T) -> bool),
) {
    let mut got = Vec::new();
    with_form(&mut |item| {
        got.push(item);
        true
    });
    let mut want = vec_form.to_vec();
    got.sort_by(T::order);
    want.sort_by(T::order);
    assert_eq!(got, want, "{kind}_with {what}: not the Vec form's results");
    let mut calls = 0;
    with_form(&mut |_| {
        calls += 1;
        false
    });
    assert_eq!(
        calls,
        usize::from(!want.is_empty()),
        "{kind}_with {what}: called again after false"
    );
}

pub(crate) fn spatial_query_oracle<V: Dim>() {
    let mut checks = QueryChecks::default();
    for seed in [1234, 99] {
        spatial_query_oracle_scene::<V>(seed, &mut checks);
    }
    // The open cases (within the tolerance of touching, where either answer is right)
    // stay rare: at most one per hundred results.
    let open_limit = checks.hits.values().sum::<usize>() / 100;
    assert!(
        checks.hits.len() == 9
            && checks.hits.values().all(|&c| c > 250)
            && checks.normals > 1000
            && checks.open <= open_limit,
        "too few checks, or too many cases left open: {checks:?}"
    );
    eprintln!("{checks:?}");
}

pub(crate) fn spatial_query_oracle_scene<V: Dim>(seed: u64, checks: &mut QueryChecks) {
    let scene = random_scene::<V>(seed, 40, 80);
    let mut app = update_app::<V>(Sched::Update);
    let entities = spawn_scene(&mut app, &scene);
    // A third of them `Static` (moved all the same): the queries see both trees.
    for &e in entities.iter().step_by(3) {
        app.world_mut().entity_mut(e).insert(Static);
    }
    let mut rng = Rng::new(seed ^ 0x5EED);
    let extent = if V::DIM == 2 { 12.0 } else { 8.0 };
    for round in 0..4 {
        run_ticks(&mut app, if round == 0 { 1 } else { 20 });
        let world = app.world_mut();
        let mut q = world.query::<OracleItem<V>>();
        let shapes = oracle_world(q.iter(world));
        assert_eq!(shapes.len(), entities.len());
        let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
        let query = state.get(world).unwrap();
        for i in 0..400 {
            let filter = random_filter(&mut rng, &entities);
            let candidates: Vec<(Entity, Solid)> = shapes
                .iter()
                .filter(|(e, _, l)| accepts(*l, *e, &filter))
                .map(|(e, s, _)| (*e, solid(s)))
                .collect();
            let origin: V = rng.vector(-extent, extent);
            let mut unit = || f64::from(rng.unit());
            let d = random_direction(&mut unit, V::DIM);
            let max_t = random_max_t(&mut unit, d.length(), 30.0);
            let direction: V = V::truncate_from_3d(d.as_vec3());
            let max_t32 = max_t as f32;
            let what = format!(
                "seed {seed} round {round} query {i}: origin {origin:?} direction {direction:?} max_t {max_t32} {filter:?}"
            );
            let mut sweep = Sweep {
                what: &what,
                kind: "cast_ray",
                origin: dvec(origin),
                half: DVec3::ZERO,
                radius: None,
                direction: dvec(direction),
                max_t: f64::from(max_t32),
                candidates: &candidates,
            };

            // Rays.
            let ray = Ray::new(origin, direction);
            sweep.check_closest(query.cast_ray(&ray, max_t32, &filter), checks);
            sweep.kind = "ray_hits";
            let hits = query.ray_hits(&ray, max_t32, &filter);
            sweep.check_all(&hits, checks);
            same_as_with(&what, "ray_hits", &hits, |f| {
                query.ray_hits_with(&ray, max_t32, &filter, f)
            });

            // Box cast: the box from its corners, which the oracle reads exactly.
            let half: V = if rng.chance(0.05) {
                V::ZERO
            } else {
                rng.vector(0.05, 1.0)
            };
            let cast = BoundingBox::from_min_max(origin - half, origin + half);
            sweep.kind = "cast_box";
            sweep.origin = (dvec(cast.min) + dvec(cast.max)) * 0.5;
            sweep.half = (dvec(cast.max) - dvec(cast.min)) * 0.5;
            if sweep.half == DVec3::ZERO {
                // The ray oracle is the right one for a point, but test the search too.
                sweep.half = DVec3::splat(1e-300);
            }
            sweep.check_closest(query.cast_box(&cast, direction, max_t32, &filter), checks);
            sweep.kind = "cast_box_all";
            let hits = query.cast_box_all(&cast, direction, max_t32, &filter);
            sweep.check_all(&hits, checks);
            same_as_with(&what, "cast_box_all", &hits, |f| {
                query.cast_box_all_with(&cast, direction, max_t32, &filter, f)
            });

            // Sphere cast: a point about one time in twenty.
            let radius = if rng.chance(0.05) {
                0.0
            } else {
                rng.range(0.05, 1.0)
            };
            sweep.kind = "cast_sphere";
            sweep.origin = dvec(origin);
            sweep.half = DVec3::ZERO;
            sweep.radius = Some(f64::from(radius));
            sweep.check_closest(
                query.cast_sphere(origin, radius, direction, max_t32, &filter),
                checks,
            );
            sweep.kind = "cast_sphere_all";
            let hits = query.cast_sphere_all(origin, radius, direction, max_t32, &filter);
            sweep.check_all(&hits, checks);
            same_as_with(&what, "cast_sphere_all", &hits, |f| {
                query.cast_sphere_all_with(origin, radius, direction, max_t32, &filter, f)
            });

            // Point.
            let p = dvec(origin);
            let got = query.point(origin, &filter);
            same_as_with(&what, "point", &got, |f| {
                query.point_with(origin, &filter, f)
            });
            check_overlaps(
                &what,
                &got,
                &candidates,
                |s| s.distance_to_point(p),
                0.0,
                checks,
                "point",
            );

            // Box.
            let half: V = rng.vector(0.0, 3.0);
            let area = BoundingBox::from_min_max(origin - half, origin + half);
            let (c, h) = (
                (dvec(area.min) + dvec(area.max)) * 0.5,
                (dvec(area.max) - dvec(area.min)) * 0.5,
            );
            let got = query.aabb(&area, &filter);
            same_as_with(&what, "aabb", &got, |f| query.aabb_with(&area, &filter, f));
            check_overlaps(
                &what,
                &got,
                &candidates,
                |s| s.distance_to_box(c, h),
                0.0,
                checks,
                "aabb",
            );

            // Sphere.
            let radius = rng.range(0.0, 3.0);
            let got = query.sphere(origin, radius, &filter);
            same_as_with(&what, "sphere", &got, |f| {
                query.sphere_with(origin, radius, &filter, f)
            });
            check_overlaps(
                &what,
                &got,
                &candidates,
                |s| s.distance_to_point(p),
                f64::from(radius),
                checks,
                "sphere",
            );
        }
    }
    finish::<V>(&app);
}

/// A box cast with a direction longer than one, down onto a ball just below the box's
/// bottom face (the ball's center inside the box's x range for the whole approach): the
/// first contact is when the bottom face has come down by the gap, `gap / |d_y|`, the box's
/// center is then at `c + t d`, and the normal is the ball's top, +y.
fn box_cast_long_direction_hits_ball<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let (cx, cy, r) = (17.727594f32, 9.874844f32, 0.30027515f32);
    let ball = app
        .world_mut()
        .spawn((
            Transform::from_xyz(cx, cy, 0.0),
            BoundingSphere::<V>::new(r),
        ))
        .id();
    run_ticks(&mut app, 1);
    let (c, half, d) = (
        Vec3::new(18.626675, 10.697815, 0.0),
        Vec3::new(1.034202, 0.4672154, 0.5),
        Vec3::new(3.723716, -1.892368, 0.0),
    );
    let gap = (c.y - half.y) - (cy + r);
    let t = gap / -d.y;
    // The ball's center stays within the box's x range until then.
    assert!(c.x - half.x + d.x * t < cx && cx < c.x + half.x);
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let shape =
        BoundingBox::from_center_half_extents(V::truncate_from_3d(c), V::truncate_from_3d(half));
    for scale in [1.0, 0.25, 40.0] {
        let direction = V::truncate_from_3d(d * scale);
        let hit = query
            .cast_box(&shape, direction, 1.0 / scale, &QueryFilter::default())
            .unwrap_or_else(|| panic!("direction scaled by {scale}: missed the ball"));
        assert_eq!(hit.entity, ball);
        assert_close(hit.t * scale, t, 1e-4, "t");
        let point = hit.point.extend_to_3d();
        assert!(point.distance(c + d * t) < 1e-3, "point {point}");
        assert!(
            hit.normal.extend_to_3d().distance(Vec3::Y) < 1e-3,
            "normal {hit:?}"
        );
    }
    finish::<V>(&app);
}

/// A sphere cast straight down onto a ball whose center is off the line of the cast,
/// with directions of length 1, 1e-3 and 1e4 and ranges infinite, huge and just enough:
/// the centers are `r1 + r2` apart when the caster has come down to `y = sqrt(1.5² -
/// 0.3²)`, the normal points from the ball's center to the caster's, and the contact
/// divides the line of centers in the ratio of the radii.
fn sphere_cast_long_direction_hits_ball<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let ball = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.3, 0.0, 0.0),
            BoundingSphere::<V>::new(1.0),
        ))
        .id();
    run_ticks(&mut app, 1);
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let start = Vec3::new(0.0, 5.0, 0.0);
    let y = (1.5f32 * 1.5 - 0.3 * 0.3).sqrt();
    let travel = 5.0 - y;
    let point = Vec3::new(0.0, y, 0.0);
    let normal = (point - Vec3::new(0.3, 0.0, 0.0)) / 1.5;
    let contact = point + (Vec3::new(0.3, 0.0, 0.0) - point) * (0.5 / 1.5);
    for scale in [1.0f32, 1e-3, 1e4] {
        let direction = V::truncate_from_3d(Vec3::NEG_Y * scale);
        for max_t in [f32::INFINITY, 1e30, travel / scale * 1.001] {
            let what = format!("scale {scale} max_t {max_t}");
            let filter = QueryFilter::default();
            let hit = query
                .cast_sphere(V::truncate_from_3d(start), 0.5, direction, max_t, &filter)
                .unwrap_or_else(|| panic!("{what}: missed the ball"));
            assert_eq!(hit.entity, ball, "{what}");
            assert_close(hit.t * scale, travel, 1e-4, &what);
            for (name, got, want) in [
                ("point", hit.point, point),
                ("normal", hit.normal, normal),
                ("contact", hit.contact, contact),
            ] {
                let got = got.extend_to_3d();
                assert!(
                    got.distance(want) < 1e-3,
                    "{what}: {name} {got}, not {want}"
                );
            }
            let all =
                query.cast_sphere_all(V::truncate_from_3d(start), 0.5, direction, max_t, &filter);
            assert_eq!(all, vec![hit], "{what}: all hits");
            // Short of the contact: nothing.
            let short = travel / scale * 0.999;
            assert_eq!(
                query.cast_sphere(V::truncate_from_3d(start), 0.5, direction, short, &filter),
                None,
                "{what}: stopped short"
            );
        }
    }
    finish::<V>(&app);
}

/// Casts far faster than the walls are thick: a box and a sphere of radius (half extent)
/// 0.25 from `x = -1000` along `+x` with a direction of length `1e6` and a range of 1, past
/// a wall 0.001 thick at `x = 10` and a `Static` one at `x = 20`. Each wall is hit when the
/// caster's front reaches its near face, at `t = (face - 0.25 + 1000) / 1e6`, with the
/// normal `-x` and the contact on that face; the all-hits forms give both walls in order,
/// and a filter excluding the first wall gives the second.
fn casts_do_not_tunnel_thin_walls<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let half = V::truncate_from_3d(Vec3::new(0.0005, 50.0, 50.0));
    let near = app
        .world_mut()
        .spawn((Transform::from_xyz(10.0, 0.0, 0.0), Aabb::<V>::new(half)))
        .id();
    let far = app
        .world_mut()
        .spawn((
            Transform::from_xyz(20.0, 0.0, 0.0),
            Aabb::<V>::new(half),
            Static,
        ))
        .id();
    run_ticks(&mut app, 1);
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let (speed, r) = (1e6f32, 0.25f32);
    let start = Vec3::new(-1000.0, 0.3, 0.1);
    let direction = V::truncate_from_3d(Vec3::X * speed);
    let origin = V::truncate_from_3d(start);
    let cast = BoundingBox::from_center_half_extents(origin, V::splat(r));
    let expect = |hit: &ShapeHit<V>, entity: Entity, face: f32, what: &str| {
        assert_eq!(hit.entity, entity, "{what}: {hit:?}");
        assert_close(hit.t * speed, face - r + 1000.0, 2e-3, what);
        assert!(
            hit.normal.extend_to_3d().distance(Vec3::NEG_X) < 1e-6,
            "{what}: normal {hit:?}"
        );
        assert_close(hit.point.extend_to_3d().x, face - r, 2e-3, what);
        assert_close(hit.contact.extend_to_3d().x, face, 2e-3, what);
    };
    let filter = QueryFilter::default();
    let skip_near = QueryFilter::default().excluding([near]);
    for (kind, first, all, second) in [
        (
            "box",
            query.cast_box(&cast, direction, 1.0, &filter),
            query.cast_box_all(&cast, direction, 1.0, &filter),
            query.cast_box(&cast, direction, 1.0, &skip_near),
        ),
        (
            "sphere",
            query.cast_sphere(origin, r, direction, 1.0, &filter),
            query.cast_sphere_all(origin, r, direction, 1.0, &filter),
            query.cast_sphere(origin, r, direction, 1.0, &skip_near),
        ),
    ] {
        let first = first.unwrap_or_else(|| panic!("{kind}: tunnelled through both walls"));
        expect(&first, near, 9.9995, kind);
        assert_eq!(all.len(), 2, "{kind}: all hits {all:?}");
        expect(&all[0], near, 9.9995, kind);
        expect(&all[1], far, 19.9995, kind);
        let second = second.unwrap_or_else(|| panic!("{kind}: tunnelled through the far wall"));
        expect(&second, far, 19.9995, kind);
    }
    finish::<V>(&app);
}

/// Bad input finds nothing and never panics: for each query, a valid form that finds the
/// box at the origin (so the check can fail), then the same query with a NaN or infinite
/// coordinate, a negative or NaN radius, an inverted box, a NaN or negative range.
fn queries_ignore_bad_input<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let target = app
        .world_mut()
        .spawn((Transform::default(), Aabb::<V>::new(V::splat(1.0))))
        .id();
    run_ticks(&mut app, 1);
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let filter = QueryFilter::default();
    let (nan, inf) = (V::splat(f32::NAN), V::splat(f32::INFINITY));
    let far = V::truncate_from_3d(Vec3::new(-5.0, 0.2, 0.1));
    let (right, unit) = (V::truncate_from_3d(Vec3::X), V::splat(0.5));
    let cast = |c: V, h: V| BoundingBox::from_center_half_extents(c, h);
    let inverted = BoundingBox::from_min_max(V::splat(0.5), V::splat(-0.5));
    let entities = |hits: Vec<ShapeHit<V>>| hits.iter().map(|h| h.entity).collect::<Vec<_>>();
    let ray = |o: V, d: V| Ray::new(o, d);
    // Each query's name, what its valid form finds, what each bad form finds.
    type Case<'a> = (&'a str, Vec<Entity>, Vec<Vec<Entity>>);
    let cases: Vec<Case> = vec![
        (
            "point",
            query.point(V::ZERO, &filter),
            vec![query.point(nan, &filter), query.point(inf, &filter)],
        ),
        (
            "aabb",
            query.aabb(&cast(V::ZERO, unit), &filter),
            vec![
                query.aabb(&cast(nan, unit), &filter),
                query.aabb(&cast(V::ZERO, inf), &filter),
                query.aabb(&inverted, &filter),
            ],
        ),
        (
            "sphere",
            query.sphere(V::ZERO, 0.5, &filter),
            vec![
                query.sphere(nan, 0.5, &filter),
                query.sphere(V::ZERO, -0.5, &filter),
                query.sphere(V::ZERO, f32::NAN, &filter),
                query.sphere(V::ZERO, f32::INFINITY, &filter),
            ],
        ),
        (
            "ray_hits",
            entities(query.ray_hits(&ray(far, right), 100.0, &filter)),
            vec![
                entities(query.ray_hits(&ray(nan, right), 100.0, &filter)),
                entities(query.ray_hits(&ray(far, nan), 100.0, &filter)),
                entities(query.ray_hits(&ray(far, right), f32::NAN, &filter)),
                entities(query.ray_hits(&ray(far, right), -1.0, &filter)),
            ],
        ),
        (
            "cast_ray",
            query
                .cast_ray(&ray(far, right), 100.0, &filter)
                .map(|h| h.entity)
                .into_iter()
                .collect(),
            vec![
                query
                    .cast_ray(&ray(far, inf), 100.0, &filter)
                    .map(|h| h.entity)
                    .into_iter()
                    .collect(),
                query
                    .cast_ray(&ray(far, right), -1.0, &filter)
                    .map(|h| h.entity)
                    .into_iter()
                    .collect(),
            ],
        ),
        (
            "cast_box_all",
            entities(query.cast_box_all(&cast(far, unit), right, 100.0, &filter)),
            vec![
                entities(query.cast_box_all(&cast(nan, unit), right, 100.0, &filter)),
                entities(query.cast_box_all(&cast(far, -unit), right, 100.0, &filter)),
                entities(query.cast_box_all(&cast(far, unit), inf, 100.0, &filter)),
                entities(query.cast_box_all(&cast(far, unit), right, f32::NAN, &filter)),
                entities(query.cast_box_all(&cast(far, unit), right, -1.0, &filter)),
            ],
        ),
        (
            "cast_sphere_all",
            entities(query.cast_sphere_all(far, 0.5, right, 100.0, &filter)),
            vec![
                entities(query.cast_sphere_all(nan, 0.5, right, 100.0, &filter)),
                entities(query.cast_sphere_all(far, -0.5, right, 100.0, &filter)),
                entities(query.cast_sphere_all(far, f32::INFINITY, right, 100.0, &filter)),
                entities(query.cast_sphere_all(far, 0.5, nan, 100.0, &filter)),
                entities(query.cast_sphere_all(far, 0.5, right, f32::NAN, &filter)),
                entities(query.cast_sphere_all(far, 0.5, right, -1.0, &filter)),
            ],
        ),
        (
            "cast_sphere",
            query
                .cast_sphere(far, 0.5, right, f32::INFINITY, &filter)
                .map(|h| h.entity)
                .into_iter()
                .collect(),
            vec![
                query
                    .cast_sphere(far, f32::NAN, right, 100.0, &filter)
                    .map(|h| h.entity)
                    .into_iter()
                    .collect(),
                query
                    .cast_sphere(far, 0.5, inf, 100.0, &filter)
                    .map(|h| h.entity)
                    .into_iter()
                    .collect(),
            ],
        ),
    ];
    for (kind, valid, bad) in cases {
        assert_eq!(valid, vec![target], "{kind}: the valid query");
        for (i, got) in bad.iter().enumerate() {
            assert!(got.is_empty(), "{kind}: bad input {i} found {got:?}");
        }
    }
    finish::<V>(&app);
}

/// `SpatialQuery::closest_point` and `Contacts::distance` on random scenes (rotated,
/// scaled, offset colliders with layers, a third of them `Static`) against the `f64`
/// oracle's closest points: the collider returned is at the smallest distance within
/// reach (ties within the tolerance), its point, distance and normal match, and none is
/// returned when every collider the filter accepts is out of reach.
fn closest_point_oracle<V: Dim>() {
    use bevy_aabb_tree::plugin::Contacts;
    for seed in [41, 42] {
        let scene = random_scene::<V>(seed, 40, 20);
        let mut app = update_app::<V>(Sched::Update);
        let entities = spawn_scene(&mut app, &scene);
        for &e in entities.iter().step_by(3) {
            app.world_mut().entity_mut(e).insert(Static);
        }
        run_ticks(&mut app, 5);
        let mut rng = Rng::new(seed ^ 0xC105E);
        let extent = if V::DIM == 2 { 14.0 } else { 10.0 };
        let world = app.world_mut();
        let mut q = world.query::<OracleItem<V>>();
        let shapes = oracle_world(q.iter(world));
        let mut state: SystemState<(SpatialQuery<V>, Contacts<V>)> = SystemState::new(world);
        let (query, contacts) = state.get(world).unwrap();
        let (mut found, mut none) = (0, 0);
        for i in 0..500 {
            let filter = random_filter(&mut rng, &entities);
            let point: V = rng.vector(-extent, extent);
            let max_distance = if rng.chance(0.2) {
                0.0
            } else {
                rng.range(0.0, 6.0)
            };
            let p = dvec(point);
            let mut near: Vec<(f64, Entity, Solid)> = shapes
                .iter()
                .filter(|(e, _, l)| accepts(*l, *e, &filter))
                .map(|(e, s, _)| (solid(s).distance_to_point(p), *e, solid(s)))
                .collect();
            near.sort_by(|a, b| a.0.total_cmp(&b.0));
            let what = format!("seed {seed} query {i}: {point:?} within {max_distance} {filter:?}");
            let got = query.closest_point(point, max_distance, &filter);
            let reach = f64::from(max_distance);
            match got {
                None => {
                    none += 1;
                    assert!(
                        near.first().is_none_or(|n| n.0 > reach - QUERY_EPS),
                        "{what}: none, but {near:?} is in reach"
                    );
                }
                Some(hit) => {
                    found += 1;
                    let (d, _, shape) = *near
                        .iter()
                        .find(|n| n.1 == hit.entity)
                        .unwrap_or_else(|| panic!("{what}: {hit:?} is not a candidate"));
                    assert!(d <= reach + QUERY_EPS, "{what}: {hit:?} out of reach");
                    assert!(
                        d <= near[0].0 + QUERY_EPS,
                        "{what}: {hit:?}, nearer {:?}",
                        near[0]
                    );
                    assert!(
                        (f64::from(hit.distance) - d).abs() <= QUERY_EPS,
                        "{what}: {hit:?} at {d}"
                    );
                    let on = shape.closest_point(p);
                    assert!(
                        dvec(hit.point).distance(on) <= QUERY_EPS,
                        "{what}: {hit:?}, point {on}"
                    );
                    if d > QUERY_EPS {
                        let normal = (p - on).normalize();
                        assert!(
                            dvec(hit.normal).distance(normal) <= 1e-2,
                            "{what}: {hit:?}, normal {normal}"
                        );
                    }
                }
            }
        }
        assert!(found > 100 && none > 50, "found {found}, none {none}");
        // The distance between two colliders.
        for _ in 0..300 {
            let (a, sa, _) = shapes[rng.below(shapes.len())];
            let (b, sb, _) = shapes[rng.below(shapes.len())];
            let want = match (solid(&sa), solid(&sb)) {
                (Solid::Ball { center, radius }, other)
                | (other, Solid::Ball { center, radius }) => other.distance_to_ball(center, radius),
                (Solid::Box { min, max }, other) => {
                    other.distance_to_box((min + max) * 0.5, (max - min) * 0.5)
                }
            };
            let got = contacts.distance(a, b).expect("both are colliders");
            assert!(
                (f64::from(got) - want).abs() <= QUERY_EPS,
                "distance {a} {b}: {got} against {want}"
            );
        }
    }
}

/// `QueryFilter::ignoring_start_overlaps`: a cast from inside a wall finds the wall
/// beyond it at the hand-computed `t`, and on random scenes every cast's hits with the
/// option are exactly its hits without it, less the colliders the cast shape overlaps
/// where it starts.
fn casts_ignore_start_overlaps<V: Dim>() {
    let mut app = update_app::<V>(Sched::Update);
    let wall = |app: &mut App, x: f32| {
        app.world_mut()
            .spawn((
                Transform::from_xyz(x, 0.0, 0.0),
                Aabb::new(v::<V>(0.5, 3.0, 3.0)),
                Static,
            ))
            .id()
    };
    let (inside, beyond) = (wall(&mut app, 0.0), wall(&mut app, 5.0));
    run_ticks(&mut app, 1);
    let world = app.world_mut();
    let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
    let query = state.get(world).unwrap();
    let plain = QueryFilter::default();
    let skip = QueryFilter::default().ignoring_start_overlaps();
    let caster = BoundingBox::from_center_half_extents(V::ZERO, V::splat(0.25));
    let dir = v::<V>(1.0, 0.0, 0.0);
    let hit = query.cast_box(&caster, dir, 10.0, &plain).unwrap();
    assert_eq!((hit.entity, hit.t), (inside, 0.0));
    let hit = query.cast_box(&caster, dir, 10.0, &skip).unwrap();
    assert_eq!(hit.entity, beyond);
    // The caster's front face at 0.25 meets the far wall's face at 4.5.
    assert!((hit.t - 4.25).abs() < 1e-5, "{hit:?}");
    let hit = query.cast_sphere(V::ZERO, 0.25, dir, 10.0, &skip).unwrap();
    assert_eq!(hit.entity, beyond);
    assert!((hit.t - 4.25).abs() < 1e-4, "{hit:?}");

    for seed in [51, 52] {
        let scene = random_scene::<V>(seed, 40, 20);
        let mut app = update_app::<V>(Sched::Update);
        spawn_scene(&mut app, &scene);
        run_ticks(&mut app, 3);
        let world = app.world_mut();
        let shapes: BTreeMap<Entity, Shape<V>> = world
            .query::<(Entity, &TrackedCollider<V>)>()
            .iter(world)
            .map(|(e, t)| (e, t.world_shape()))
            .collect();
        let mut state: SystemState<SpatialQuery<V>> = SystemState::new(world);
        let query = state.get(world).unwrap();
        let mut rng = Rng::new(seed);
        let mut skipped = 0;
        for _ in 0..300 {
            let center: V = rng.vector(-8.0, 8.0);
            let half: V = rng.vector(0.1, 1.5);
            let dir: V = rng.vector(-1.0, 1.0);
            let caster = Shape::Box(BoundingBox::from_center_half_extents(center, half));
            let all = query.cast_box_all(&caster.bounding_box(), dir, 10.0, &plain);
            let kept = query.cast_box_all(&caster.bounding_box(), dir, 10.0, &skip);
            let want: Vec<_> = all
                .iter()
                .filter(|h| !caster.overlaps(&shapes[&h.entity]))
                .copied()
                .collect();
            skipped += all.len() - want.len();
            assert_eq!(kept, want, "seed {seed}: cast of {caster:?} along {dir:?}");
            // The first hit: the same entity, at the same `t` up to rounding (the search
            // for the first hit sweeps over a range it shrinks as it goes).
            let first = query.cast_box(&caster.bounding_box(), dir, 10.0, &skip);
            assert_eq!(first.map(|h| h.entity), want.first().map(|h| h.entity));
            if let (Some(a), Some(b)) = (first, want.first()) {
                assert!(
                    (a.t - b.t).abs() <= 1e-4 * b.t.max(1.0),
                    "{a:?} against {b:?}"
                );
            }
        }
        assert!(skipped > 20, "seed {seed}: only {skipped} start overlaps");
    }
}

both_dims!(
    casts_ignore_start_overlaps,
    closest_point_oracle,
    queries_ignore_bad_input,
    spatial_query_oracle,
    box_cast_long_direction_hits_ball,
    sphere_cast_long_direction_hits_ball,
    casts_do_not_tunnel_thin_walls
);
