//! Box against box: overlap and containment, hand-computed and random.

use super::*;

// ---------------------------------------------------------------------------------------
// Box vs box: seed 000
// ---------------------------------------------------------------------------------------

/// One row of seed 000's results table.
pub(crate) struct Seed000Case {
    pub(crate) a: [f32; 3],
    pub(crate) b: [f32; 3],
    /// The "Post" and "CJM" columns (identical, and right).
    pub(crate) post: bool,
    /// The "Anon" column.
    pub(crate) anon: bool,
}

/// Every box in the table has half extents 0.5 on every axis.
pub(crate) const HALF: [f32; 3] = [0.5; 3];

#[rustfmt::skip]
pub(crate) const SEED_000: [Seed000Case; 13] = [
    Seed000Case { a: [0.0, 0.0, 0.0], b: [0.0, 0.0, 0.0], post: true, anon: true },
    // Touching: |0 - 1| = 0.5 + 0.5.
    Seed000Case { a: [0.0, 0.0, 0.0], b: [1.0, 0.0, 0.0], post: true, anon: true },
    Seed000Case { a: [0.0, 0.0, 0.0], b: [1.5, 0.0, 0.0], post: false, anon: true },
    Seed000Case { a: [0.0, 0.0, 0.0], b: [15.0, 0.0, 0.0], post: false, anon: true },
    Seed000Case { a: [1.0, 0.0, 0.0], b: [1.0, 0.0, 0.0], post: true, anon: true },
    Seed000Case { a: [1.0, 0.0, 0.0], b: [1.5, 0.0, 0.0], post: true, anon: true },
    Seed000Case { a: [1.0, 0.0, 0.0], b: [15.0, 0.0, 0.0], post: false, anon: true },
    Seed000Case { a: [1.5, 0.0, 0.0], b: [1.5, 0.0, 0.0], post: true, anon: true },
    Seed000Case { a: [1.5, 0.0, 0.0], b: [15.0, 0.0, 0.0], post: false, anon: true },
    Seed000Case { a: [0.0, 0.0, 0.0], b: [0.0, 1.5, 0.0], post: false, anon: true },
    Seed000Case { a: [0.0, 0.0, 0.0], b: [0.0, 2.5, 0.0], post: false, anon: true },
    Seed000Case { a: [0.0, 0.0, 0.0], b: [0.0, 3.5, 0.0], post: false, anon: true },
    Seed000Case { a: [0.0, 0.0, 0.0], b: [15.0, 15.0, 15.0], post: false, anon: false },
];

/// The variant from the comment by "Anonymous" in seed 000, transcribed: its three `if`s
/// are nested, so it returns `false` only when *every* axis separates the boxes.
///
/// It is wrong: one separating axis is enough for two boxes to be disjoint (two boxes side
/// by side along x overlap on y and z but do not touch), so it reports an overlap for every
/// pair that overlaps on at least one axis; the table has seven such disjoint pairs. The
/// right test (the post's, once its parentheses are fixed, and CJM's) ANDs the three
/// per-axis tests.
pub(crate) fn anon_overlap<V: Vector>(ca: V, ha: V, cb: V, hb: V) -> bool {
    let separated = |i: usize| (ca.axis(i) - cb.axis(i)).abs() > ha.axis(i) + hb.axis(i);
    // if (sep x) { if (sep y) { if (sep z) { return false; } } }  (no z test in 2D)
    if separated(0) && separated(1) && (V::DIM == 2 || separated(2)) {
        return false;
    }
    true
}

pub(crate) fn seed_000_table<V: Vector>() {
    let h: V = vec(HALF);
    let mut anon_wrong = 0;
    for (i, case) in SEED_000.iter().enumerate() {
        let (ca, cb): (V, V) = (vec(case.a), vec(case.b));
        assert_eq!(
            overlaps_center_half_extents(ca, h, cb, h),
            case.post,
            "case {}",
            i + 1
        );
        assert_eq!(
            overlaps_center_half_extents(cb, h, ca, h),
            case.post,
            "case {} swapped",
            i + 1
        );
        let (a, b) = (
            BoundingBox::from_center_half_extents(ca, h),
            BoundingBox::from_center_half_extents(cb, h),
        );
        assert_eq!(a.overlaps(&b), case.post, "case {}: {a:?} vs {b:?}", i + 1);
        assert_eq!(b.overlaps(&a), case.post, "case {} swapped", i + 1);
        assert!(check_box_box(ca, h, cb, h, EXACT));
        // The wrong variant reproduces its column, and disagrees exactly where the table
        // says it does.
        let anon = anon_overlap(ca, h, cb, h);
        assert_eq!(anon, case.anon, "Anon variant, case {}", i + 1);
        if anon != case.post {
            anon_wrong += 1;
        }
    }
    assert_eq!(anon_wrong, 7, "cases 3, 4, 7, 9, 10, 11 and 12");
}

crate::kit::tests_2d_3d!(seed_000_table: seed_000_table_2d, seed_000_table_3d);

/// Touching counts as overlapping, in every form; the next float apart does not.
pub(crate) fn touching_cases<V: Vector>() {
    let unit = bbox::<V>([0.0; 3], [1.0; 3]);
    let touching = [
        // Face, edge, corner (in 2D, the edge case is a corner too).
        bbox([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]),
        bbox([1.0, 1.0, 0.0], [2.0, 2.0, 1.0]),
        bbox([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]),
        bbox([-1.0, -1.0, -1.0], [0.0, 0.0, 0.0]),
        // Zero-size boxes: a point on a face, a flat box on a face, a point at a corner.
        bbox([1.0, 0.5, 0.5], [1.0, 0.5, 0.5]),
        bbox([0.0, -1.0, 0.25], [1.0, 0.0, 0.75]),
        bbox([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    ];
    for b in touching {
        assert!(
            unit.overlaps(&b) && b.overlaps(&unit),
            "{unit:?} touches {b:?}"
        );
        assert!(
            overlaps_center_half_extents(
                unit.center(),
                unit.half_extents(),
                b.center(),
                b.half_extents()
            ),
            "{unit:?} touches {b:?} (center/half-extents form)"
        );
        assert!(check_min_max_forms(&unit, &b, EXACT));
    }
    // Two equal points.
    let p = bbox::<V>([2.5; 3], [2.5; 3]);
    assert!(p.overlaps(&p));
    assert!(overlaps_center_half_extents(
        p.center(),
        V::ZERO,
        p.center(),
        V::ZERO
    ));
    // One float apart.
    let next = 1.0f32.next_up();
    let apart = [
        bbox::<V>([next, 0.0, 0.0], [2.0, 1.0, 1.0]),
        bbox([0.0, next, 0.0], [1.0, 2.0, 1.0]),
        bbox([next, next, 0.0], [2.0, 2.0, 1.0]),
        bbox([next, 0.5, 0.5], [next, 0.5, 0.5]),
    ];
    for b in apart {
        assert!(
            !unit.overlaps(&b) && !b.overlaps(&unit),
            "{unit:?} does not touch {b:?}"
        );
        // Too close to touching for the center/half-extents form of a min/max box (its
        // center is rounded), so that form is checked directly below.
        assert!(!check_min_max_forms(&unit, &b, FLAT));
    }
    assert!(!overlaps_center_half_extents(
        vec::<V>([0.0; 3]),
        vec([0.5; 3]),
        vec([1.0f32.next_up(), 0.0, 0.0]),
        vec([0.5; 3]),
    ));
    // Center/half-extents form, touching on the second axis only.
    assert!(overlaps_center_half_extents(
        vec::<V>([0.0; 3]),
        vec([0.5, 1.0, 0.5]),
        vec([0.25, 2.0, 0.0]),
        vec([0.5, 1.0, 0.5]),
    ));
    assert!(!overlaps_center_half_extents(
        vec::<V>([0.0; 3]),
        vec([0.5, 1.0, 0.5]),
        vec([0.25, 2.0f32.next_up(), 0.0]),
        vec([0.5, 1.0, 0.5]),
    ));
}

crate::kit::tests_2d_3d!(
    touching_cases:
    touching_counts_as_overlap_2d,
    touching_counts_as_overlap_3d
);

/// Corners that are not finite: the test equals its definition (every axis's two
/// comparisons, each false with a NaN) for a NaN or an infinity in each coordinate of
/// either box, both orders. The tree never stores such a box; the test must still not
/// call them overlapping where a comparison fails.
pub(crate) fn non_finite_corners<V: Vector>() {
    let definition = |a: &BoundingBox<V>, b: &BoundingBox<V>| {
        (0..V::DIM).all(|i| a.min.axis(i) <= b.max.axis(i) && b.min.axis(i) <= a.max.axis(i))
    };
    let base = [
        bbox::<V>([0.0; 3], [1.0; 3]),
        bbox([0.5, -2.0, 0.25], [3.0, 0.5, 0.75]),
        bbox([5.0; 3], [6.0; 3]),
    ];
    let mut checked = 0;
    for special in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for a in &base {
            for b in &base {
                for k in 0..2 * V::DIM {
                    let mut odd = *a;
                    if k < V::DIM {
                        odd.min.set_axis(k, special);
                    } else {
                        odd.max.set_axis(k - V::DIM, special);
                    }
                    for (x, y) in [(&odd, b), (b, &odd)] {
                        assert_eq!(x.overlaps(y), definition(x, y), "{x:?} vs {y:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 3 * 3 * 3 * 2 * V::DIM * 2);
    // A NaN never overlaps; a box spanning everything overlaps every box.
    let nan = bbox::<V>([f32::NAN; 3], [f32::NAN; 3]);
    let all = bbox::<V>([f32::NEG_INFINITY; 3], [f32::INFINITY; 3]);
    for b in &base {
        assert!(!nan.overlaps(b) && !b.overlaps(&nan));
        assert!(all.overlaps(b) && b.overlaps(&all));
    }
}

crate::kit::tests_2d_3d!(non_finite_corners: non_finite_corners_2d, non_finite_corners_3d);

proptest! {
    #![proptest_config(config())]

    /// Center/half-extents on the grid: both forms against seed 000's test in f64.
    #[test]
    fn box_box_forms_agree_exact(
        ca in grid3(12), ha in grid_size3(), cb in grid3(12), hb in grid_size3(),
    ) {
        check_box_box::<Vec2>(vec(ca), vec(ha), vec(cb), vec(hb), EXACT);
        check_box_box::<Vec3>(vec(ca), vec(ha), vec(cb), vec(hb), EXACT);
    }

    /// Random floats: both forms against seed 000's test in f64, away from touching.
    #[test]
    fn box_box_forms_agree_float(a in float_box(), b in float_box()) {
        let clear = check_box_box::<Vec2>(
            vec(a.0), vec(sub3(a.1, a.0)), vec(b.0), vec(sub3(b.1, b.0)), FLAT,
        ) & check_box_box::<Vec3>(
            vec(a.0), vec(sub3(a.1, a.0)), vec(b.0), vec(sub3(b.1, b.0)), FLAT,
        );
        prop_assume!(clear);
    }

    /// Min/max boxes on the grid: `center`, `half_extents` and the center/half-extents
    /// test agree exactly with `overlaps` and with the plain test.
    #[test]
    fn min_max_vs_center_half_exact(a in grid_box(), b in grid_box()) {
        check_min_max_forms::<Vec2>(&bbox(a.0, a.1), &bbox(b.0, b.1), EXACT);
        check_min_max_forms::<Vec3>(&bbox(a.0, a.1), &bbox(b.0, b.1), EXACT);
    }

    /// The same with random floats (the forms may round differently within a hair of
    /// touching, so those cases are left out).
    #[test]
    fn min_max_vs_center_half_float(a in float_box(), b in float_box()) {
        let clear = check_min_max_forms::<Vec2>(&bbox(a.0, a.1), &bbox(b.0, b.1), FLAT)
            & check_min_max_forms::<Vec3>(&bbox(a.0, a.1), &bbox(b.0, b.1), FLAT);
        prop_assume!(clear);
    }
}
