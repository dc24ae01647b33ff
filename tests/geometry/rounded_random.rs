//! Rounded boxes (boxes, balls, capsules, boxes with rounded edges): random cases of every
//! pair kind (overlap, contact, sweep, ray, cast) against the `f64` oracle of
//! `rounded_oracle`, on floats, on the dyadic grid and scaled.

use super::rounded::{ON_GRID, ONE, grid_half, heavy_config, rounded_config, scale_pow2, sized};
use super::rounded_oracle::*;
use super::*;

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Box),
        Just(Kind::Ball),
        (0usize..3).prop_map(Kind::Capsule),
        Just(Kind::General),
    ]
}

fn float_spec() -> impl Strategy<Value = Spec> {
    (
        kind(),
        prop::array::uniform3(-4.0f32..4.0),
        sized(3.0),
        float_radius(),
    )
        .prop_map(|(kind, c, h, r)| Spec { kind, c, h, r })
}

fn grid_spec() -> impl Strategy<Value = Spec> {
    (kind(), grid3(8), grid_half(), grid_radius()).prop_map(|(kind, c, h, r)| Spec {
        kind,
        c,
        h,
        r,
    })
}

/// A motion: free (`free`), or aimed from `from` at `to` moved by `jitter`, scaled by
/// `k` (half the cases), so that hits are common.
fn motion(
    aim: bool,
    free: [f32; 3],
    from: [f32; 3],
    to: [f32; 3],
    jitter: [f32; 3],
    k: f32,
) -> [f32; 3] {
    if aim {
        sub3(add3(to, jitter), from).map(|x| x * k)
    } else {
        free
    }
}

/// Jitter for aimed motions, and their scale: floats, or on the grid with a power of two.
fn float_aim() -> impl Strategy<Value = (bool, [f32; 3], f32)> {
    (
        any::<bool>(),
        prop::array::uniform3(-2.0f32..2.0),
        0.25f32..2.0,
    )
}

fn grid_aim() -> impl Strategy<Value = (bool, [f32; 3], f32)> {
    (
        any::<bool>(),
        grid3(4),
        (-2i32..=1).prop_map(|e| 2f32.powi(e)),
    )
}

/// Scales for the swept tests and rays: huge ones, and small ones down to where the
/// sweeps' absolute tolerance (gaps under `1e-5` are contact) still leaves cases to judge.
fn sweep_scale() -> impl Strategy<Value = f32> {
    prop_oneof![
        (-4i32..=-1).prop_map(|e| 2f32.powi(e)),
        (1i32..=100).prop_map(|e| 2f32.powi(e))
    ]
}

fn both_static(a: &Spec, b: &Spec, p: [f32; 3], judge: Judge) -> bool {
    check_static::<Vec2>(&a.build(), &b.build(), vec(p), judge)
        & check_static::<Vec3>(&a.build(), &b.build(), vec(p), judge)
}

fn both_contact(a: &Spec, b: &Spec, judge: Judge) -> bool {
    check_contact::<Vec2>(&a.build(), &b.build(), judge)
        & check_contact::<Vec3>(&a.build(), &b.build(), judge)
}

fn both_sweep(a: &Spec, da: [f32; 3], b: &Spec, db: [f32; 3], judge: Judge) -> bool {
    check_sweep::<Vec2>(&a.build(), vec(da), &b.build(), vec(db), judge)
        & check_sweep::<Vec3>(&a.build(), vec(da), &b.build(), vec(db), judge)
}

fn both_ray(o: [f32; 3], d: [f32; 3], t: &Spec, max_t: f32, judge: Judge) -> bool {
    check_ray::<Vec2>(&ray(o, d), &t.build(), max_t, judge)
        & check_ray::<Vec3>(&ray(o, d), &t.build(), max_t, judge)
}

fn both_cast(s: &Spec, d: [f32; 3], max_t: f32, t: &Spec, judge: Judge) -> bool {
    check_cast::<Vec2>(&s.build(), vec(d), max_t, &t.build(), judge)
        & check_cast::<Vec3>(&s.build(), vec(d), max_t, &t.build(), judge)
}

proptest! {
    #![proptest_config(rounded_config())]

    #[test]
    fn static_float(a in float_spec(), b in float_spec(), p in prop::array::uniform3(-8.0f32..8.0)) {
        prop_assume!(both_static(&a, &b, p, ONE));
    }

    #[test]
    fn static_grid(a in grid_spec(), b in grid_spec(), p in grid3(16)) {
        prop_assert!(both_static(&a, &b, p, ON_GRID));
    }

    /// Huge and tiny: the case scaled by a power of two, the oracle's tolerances with it.
    #[test]
    fn static_scaled(
        a in float_spec(), b in float_spec(), p in prop::array::uniform3(-8.0f32..8.0),
        s in scale_pow2(),
    ) {
        let judge = Judge { tol: ROUND, unit: f64::from(s) };
        prop_assume!(both_static(&a.scaled(s), &b.scaled(s), p.map(|x| x * s), judge));
    }


    #[test]
    fn sweep_float(
        a in float_spec(), da in float_disp(), b in float_spec(), db in float_disp(),
        same in prop::bool::weighted(0.1), (aim, jitter, k) in float_aim(),
    ) {
        let db = if same { da } else { add3(da, motion(aim, db, b.c, a.c, jitter, k)) };
        prop_assume!(both_sweep(&a, da, &b, db, ONE));
    }

    #[test]
    fn sweep_grid(
        a in grid_spec(), da in prop::array::uniform3(pow2_or_zero()),
        b in grid_spec(), db in prop::array::uniform3(pow2_or_zero()),
        (aim, jitter, k) in grid_aim(),
    ) {
        // Relative motions on the grid: the aimed one alone (da = 0), or two powers of two.
        let (da, db) = if aim { ([0.0; 3], motion(aim, db, b.c, a.c, jitter, k)) } else { (da, db) };
        prop_assume!(both_sweep(&a, da, &b, db, ON_GRID));
    }

    #[test]
    fn sweep_scaled(
        a in float_spec(), da in float_disp(), b in float_spec(), db in float_disp(),
        (aim, jitter, k) in float_aim(), s in sweep_scale(),
    ) {
        let db = add3(da, motion(aim, db, b.c, a.c, jitter, k));
        let judge = Judge { tol: ROUND, unit: f64::from(s) };
        let k = |x: [f32; 3]| x.map(|v| v * s);
        prop_assume!(both_sweep(&a.scaled(s), k(da), &b.scaled(s), k(db), judge));
    }

    #[test]
    fn ray_float(
        o in prop::array::uniform3(-8.0f32..8.0), d in float_disp(), t in float_spec(),
        max_t in float_max_t(), (aim, jitter, k) in float_aim(),
    ) {
        let d = motion(aim, d, o, t.c, jitter, k);
        prop_assume!(both_ray(o, d, &t, max_t, ONE));
    }

    #[test]
    fn ray_grid(
        o in grid3(16), d in prop::array::uniform3(pow2_or_zero()), t in grid_spec(),
        max_t in grid_max_t(), (aim, jitter, k) in grid_aim(),
    ) {
        let d = motion(aim, d, o, t.c, jitter, k);
        prop_assume!(both_ray(o, d, &t, max_t, ON_GRID));
    }

    #[test]
    fn ray_scaled(
        o in prop::array::uniform3(-8.0f32..8.0), d in float_disp(), t in float_spec(),
        max_t in float_max_t(), (aim, jitter, k) in float_aim(), s in sweep_scale(),
    ) {
        let d = motion(aim, d, o, t.c, jitter, k);
        let judge = Judge { tol: ROUND, unit: f64::from(s) };
        prop_assume!(both_ray(o.map(|x| x * s), d.map(|x| x * s), &t.scaled(s), max_t, judge));
    }

    #[test]
    fn cast_scaled(
        c in float_spec(), d in float_disp(), t in float_spec(), max_t in float_max_t(),
        (aim, jitter, k) in float_aim(), s in sweep_scale(),
    ) {
        let d = motion(aim, d, c.c, t.c, jitter, k);
        let judge = Judge { tol: ROUND, unit: f64::from(s) };
        prop_assume!(both_cast(&c.scaled(s), d.map(|x| x * s), max_t, &t.scaled(s), judge));
    }

    #[test]
    fn cast_float(
        s in float_spec(), d in float_disp(), t in float_spec(), max_t in float_max_t(),
        (aim, jitter, k) in float_aim(),
    ) {
        let d = motion(aim, d, s.c, t.c, jitter, k);
        prop_assume!(both_cast(&s, d, max_t, &t, ONE));
    }

    #[test]
    fn cast_grid(
        s in grid_spec(), d in prop::array::uniform3(pow2_or_zero()), t in grid_spec(),
        max_t in grid_max_t(), (aim, jitter, k) in grid_aim(),
    ) {
        let d = motion(aim, d, s.c, t.c, jitter, k);
        prop_assume!(both_cast(&s, d, max_t, &t, ON_GRID));
    }
}

proptest! {
    #![proptest_config(heavy_config())]

    #[test]
    fn contact_float(a in float_spec(), b in float_spec()) {
        prop_assume!(both_contact(&a, &b, ONE));
    }

    #[test]
    fn contact_grid(a in grid_spec(), b in grid_spec()) {
        prop_assert!(both_contact(&a, &b, ON_GRID));
    }

    #[test]
    fn contact_scaled(a in float_spec(), b in float_spec(), s in scale_pow2()) {
        let judge = Judge { tol: ROUND, unit: f64::from(s) };
        prop_assume!(both_contact(&a.scaled(s), &b.scaled(s), judge));
    }
}
