//! The tree's queries against a linear scan of what the oracle knows of each proxy (its
//! tight and fat boxes): box, point and ball queries (and a box query's early exit) over
//! the fat boxes, the closest ray hit and box cast over the tight boxes, and every ray hit
//! over the fat boxes. Bevy-free: the model of the tree's operations (`tree_model.rs`) uses
//! it, through the kit and in the fuzz target (`fuzz/fuzz_targets/tree_ops.rs`), which
//! includes both files with `#[path]`.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aabb_tree::geometry::box_cast_at;
use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, Ray, Vector};

/// Checks the queries of `tree` spanned by `a`, `b` (a box, a ray from `a` to `b`), a ball
/// of radius `r` at `a` and a box of half extents `r / 5` at `a` cast along the ray, up
/// to `max_t`, against the proxies of `oracle`, whose tight and fat boxes `boxes` gives.
/// Hostile values (an inverted box, an invalid ray, a negative or NaN size) are only
/// checked not to panic where the answer has no definition.
pub fn check_queries<V: Vector, T, E>(
    tree: &DynamicTree<V, T>,
    oracle: &BTreeMap<ProxyId, E>,
    boxes: impl Fn(&E) -> (BoundingBox<V>, BoundingBox<V>),
    (a, b, r, max_t): (V, V, f32, f32),
) {
    let tight = |id: &ProxyId| boxes(&oracle[id]).0;
    let fat = |id: &ProxyId| boxes(&oracle[id]).1;
    let scan = |keep: &dyn Fn(&BoundingBox<V>) -> bool| -> BTreeSet<ProxyId> {
        oracle.keys().filter(|id| keep(&fat(id))).copied().collect()
    };

    let query = BoundingBox::from_min_max(a.min(b), a.max(b));
    let mut got = BTreeSet::new();
    tree.query_box(&query, |id, _| got.insert(id));
    let want = scan(&|f| f.overlaps(&query));
    assert_eq!(got, want, "box query {query:?}");

    // Early exit: stop after the first proxy.
    let mut count = 0;
    tree.query_box(&query, |_, _| {
        count += 1;
        false
    });
    assert_eq!(count, usize::from(!want.is_empty()), "early exit");

    // An inverted box (as given) is a hostile query: the same test, no panic.
    let inverted = BoundingBox::from_min_max(a, b);
    let mut got = BTreeSet::new();
    tree.query_box(&inverted, |id, _| got.insert(id));
    assert_eq!(
        got,
        scan(&|f| f.overlaps(&inverted)),
        "box query as given {inverted:?}"
    );

    let mut got = BTreeSet::new();
    tree.query_point(a, |id, _| got.insert(id));
    assert_eq!(got, scan(&|f| f.contains_point(a)), "point query {a:?}");

    let ball = bevy_aabb_tree::Ball::new(a, r);
    let mut got = BTreeSet::new();
    tree.query_ball(&ball, |id, _| got.insert(id));
    let want = scan(&|f| f.distance_squared_to_point(a) <= r * r);
    assert_eq!(got, want, "ball query {ball:?}");

    let ray = Ray::new(a, b - a);
    let got = tree.cast_ray(&ray, max_t, |id, _| ray.box_hit_at(&tight(&id), max_t));
    let want = if ray.is_valid() {
        oracle
            .keys()
            .filter_map(|id| ray.box_hit_at(&tight(id), max_t))
            .min_by(|x, y| x.total_cmp(y))
    } else {
        None
    };
    assert_eq!(got.map(|h| h.t), want, "closest ray hit {ray:?} {max_t}");
    if let Some(hit) = got {
        assert_eq!(ray.box_hit_at(&tight(&hit.proxy), max_t), Some(hit.t));
    }

    let mut got = BTreeSet::new();
    tree.ray_hits(&ray, max_t, |id, _, t| {
        assert_eq!(ray.box_hit_at(&fat(&id), max_t), Some(t));
        got.insert(id)
    });
    let want = if ray.is_valid() {
        scan(&|f| ray.box_hit_at(f, max_t).is_some())
    } else {
        BTreeSet::new()
    };
    assert_eq!(got, want, "all ray hits {ray:?} {max_t}");

    // Box cast: a box of half extents `r / 5` centred on `a`, cast along `b - a`. The
    // tree's ray starts at the shape's computed center so both sides agree exactly.
    let shape = BoundingBox::from_center_half_extents(a, V::splat(r * 0.2));
    let half = shape.half_extents();
    let cast = Ray::new(shape.center(), ray.direction);
    let got = tree.cast_box(&cast, half, max_t, |id, _| {
        box_cast_at(&shape, cast.direction, max_t, &tight(&id)).map(|h| h.0)
    });
    // A negative or NaN size (from a hostile radius) is only checked not to panic.
    if V::ZERO.all_le(half) {
        let want = if cast.is_valid() && half.is_finite() {
            oracle
                .keys()
                .filter_map(|id| {
                    box_cast_at(&shape, cast.direction, max_t, &tight(id)).map(|h| h.0)
                })
                .min_by(|x, y| x.total_cmp(y))
        } else {
            None
        };
        assert_eq!(
            got.map(|h| h.t),
            want,
            "box cast {shape:?} {cast:?} {max_t}"
        );
    }
}
