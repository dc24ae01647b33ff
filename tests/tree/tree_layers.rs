//! Layers in the tree: random trees whose proxies get random layers, through insertions,
//! removals, single and batched moves, pair updates (which refit, rotate and rebuild),
//! bulk removals and layer changes, with `validate` after every operation (which checks
//! that unions held fresh are exact), and every query with a layer test against a
//! brute-force scan of the live proxies, on fresh and on stale unions. A scene of two
//! layers side by side checks that a masked query skips the other layer's subtrees.

use std::collections::{BTreeMap, BTreeSet};

use bevy_aabb_tree::tree::{LayerTest, Layers};
use bevy_aabb_tree::{Ball, BoundingBox, DynamicTree, ProxyId, Ray, Vector};
use glam::{Vec2, Vec3};

use crate::kit::tree_scene;
use tree_scene::{lcg, v};

/// A random layer value: mostly one or two of four layers, sometimes all or none.
fn random_layers(r: &mut impl FnMut() -> f32) -> Layers {
    let bits = |r: &mut dyn FnMut() -> f32| (1u32 << (r() * 4.0) as u32) | ((r() < 0.3) as u32);
    match (r() * 10.0) as u32 {
        0 => Layers::ALL,
        1 => Layers::new(bits(r), 0),
        _ => Layers::new(bits(r), bits(r)),
    }
}

/// A random layer test.
fn random_test(r: &mut impl FnMut() -> f32) -> LayerTest {
    match (r() * 3.0) as u32 {
        0 => LayerTest::Any,
        1 => LayerTest::Memberships(1 << (r() * 4.0) as u32),
        _ => LayerTest::InteractsWith(random_layers(r)),
    }
}

/// The proxies each query finds, by brute force and by the tree, compared.
fn check_queries<V: Vector>(
    tree: &DynamicTree<V, u32>,
    live: &BTreeMap<ProxyId, Layers>,
    r: &mut impl FnMut() -> f32,
) {
    let test = random_test(r);
    let passes = |id: &ProxyId| test.passes(live[id]);
    let a = v::<V>([r() * 40.0 - 20.0, r() * 40.0 - 20.0, r() * 40.0 - 20.0]);
    let b = v::<V>([r() * 40.0 - 20.0, r() * 40.0 - 20.0, r() * 40.0 - 20.0]);
    let fat = |id: &ProxyId| tree.fat_box(*id).unwrap();

    let query = BoundingBox::from_min_max(a.min(b), a.max(b));
    let want: BTreeSet<ProxyId> = live
        .keys()
        .filter(|id| passes(id) && fat(id).overlaps(&query))
        .copied()
        .collect();
    let mut got = BTreeSet::new();
    tree.query_box_in(&query, test, |id, _| got.insert(id));
    assert_eq!(got, want, "box query, {test:?}");

    let want: BTreeSet<ProxyId> = live
        .keys()
        .filter(|id| passes(id) && fat(id).contains_point(a))
        .copied()
        .collect();
    let mut got = BTreeSet::new();
    tree.query_point_in(a, test, |id, _| got.insert(id));
    assert_eq!(got, want, "point query, {test:?}");

    let ball = Ball::new(a, r() * 6.0);
    let want: BTreeSet<ProxyId> = live
        .keys()
        .filter(|id| passes(id) && ball.overlaps_box(&fat(id)))
        .copied()
        .collect();
    let mut got = BTreeSet::new();
    tree.query_ball_in(&ball, test, |id, _| got.insert(id));
    assert_eq!(got, want, "ball query, {test:?}");

    let ray = Ray::new(a, b - a);
    let want: BTreeSet<ProxyId> = live
        .keys()
        .filter(|id| passes(id) && ray.box_hit_at(&fat(id), 1.0).is_some())
        .copied()
        .collect();
    let mut got = BTreeSet::new();
    tree.ray_hits_in(&ray, 1.0, test, |id, _, _| got.insert(id));
    assert_eq!(got, want, "ray hits, {test:?}");

    // The closest hit: the nearest entry into a fat box that passes.
    let nearest = want
        .iter()
        .map(|id| ray.box_hit_at(&fat(id), 1.0).unwrap())
        .fold(f32::INFINITY, f32::min);
    let hit = tree.cast_ray_in(&ray, 1.0, test, |id, _| ray.box_hit_at(&fat(&id), 1.0));
    match hit {
        Some(hit) => {
            assert!(want.contains(&hit.proxy), "closest hit {hit:?}, {test:?}");
            assert_eq!(hit.t, nearest, "closest hit, {test:?}");
        }
        None => assert!(want.is_empty(), "no closest hit, {test:?}"),
    }
}

/// Random operations, validated after each; queries checked now and then, with the
/// unions sometimes refreshed and sometimes left stale.
fn random_ops<V: Vector>(seed: u32) {
    let mut r = lcg(seed);
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let mut live: BTreeMap<ProxyId, Layers> = BTreeMap::new();
    let mut pairs = Vec::new();
    let random_box = |r: &mut dyn FnMut() -> f32| {
        let c = v::<V>([r() * 40.0 - 20.0, r() * 40.0 - 20.0, r() * 40.0 - 20.0]);
        BoundingBox::from_center_half_extents(c, v::<V>([r() * 2.0, r() * 2.0, r() * 2.0]))
    };
    for step in 0..6000u32 {
        let x = r();
        let pick = |r: &mut dyn FnMut() -> f32, live: &BTreeMap<ProxyId, Layers>| {
            live.keys()
                .nth((r() * live.len() as f32) as usize % live.len().max(1))
                .copied()
        };
        if x < 0.25 || live.len() < 8 {
            let id = tree.create_proxy(random_box(&mut r), step).unwrap();
            let layers = random_layers(&mut r);
            tree.set_layers(id, layers).unwrap();
            live.insert(id, layers);
        } else if x < 0.35 {
            let id = pick(&mut r, &live).unwrap();
            tree.destroy_proxy(id).unwrap();
            live.remove(&id);
        } else if x < 0.55 {
            let id = pick(&mut r, &live).unwrap();
            let layers = random_layers(&mut r);
            tree.set_layers(id, layers).unwrap();
            live.insert(id, layers);
        } else if x < 0.75 {
            let id = pick(&mut r, &live).unwrap();
            tree.move_proxy(id, random_box(&mut r), V::ZERO).unwrap();
        } else if x < 0.85 {
            let moves: Vec<_> = (0..live.len() / 2)
                .map(|_| (pick(&mut r, &live).unwrap(), random_box(&mut r), V::ZERO))
                .collect();
            tree.move_proxies(moves, |_, result| {
                result.unwrap();
            });
        } else if x < 0.95 {
            pairs.clear();
            tree.update_pairs(&mut pairs);
        } else if x < 0.96 {
            let ids: Vec<ProxyId> = live.keys().step_by(2).copied().collect();
            assert_eq!(tree.destroy_proxies(&ids), ids.len());
            for id in ids {
                live.remove(&id);
            }
        } else {
            if r() < 0.7 {
                tree.refresh_layers();
            }
            for _ in 0..4 {
                check_queries(&tree, &live, &mut r);
            }
        }
        tree.validate()
            .unwrap_or_else(|e| panic!("seed {seed}, step {step}: {e}"));
        for (id, layers) in &live {
            assert_eq!(tree.layers(*id), *layers);
        }
    }
}

#[test]
fn random_ops_2d() {
    for seed in 1..4 {
        random_ops::<Vec2>(seed);
    }
}

#[test]
fn random_ops_3d() {
    for seed in 1..4 {
        random_ops::<Vec3>(seed);
    }
}

/// The nodes that a query for the layers `mask` over a box holding every proxy enters,
/// from the tree's shape ([`DynamicTree::visit_nodes`]): the leaves in `mask` and, with
/// fresh unions, the internal nodes above one of them; with stale unions, every internal
/// node.
fn nodes_entered<V: Vector>(tree: &DynamicTree<V, u32>, mask: u32, fresh: bool) -> u64 {
    let mut parents_of_passing = Vec::new();
    let mut internal = 0u64;
    tree.visit_nodes(|_, view, _| {
        match view.proxy {
            None => internal += 1,
            Some(proxy) if tree.layers(proxy).memberships & mask != 0 => {
                parents_of_passing.push(view.parent);
            }
            Some(_) => {}
        }
        true
    });
    let passing = parents_of_passing.len() as u64;
    if !fresh {
        return internal + passing;
    }
    let mut above = BTreeSet::new();
    for &parent in &parents_of_passing {
        let mut at = parent;
        while let Some(id) = at {
            if !above.insert(id) {
                break;
            }
            at = tree.node(id).unwrap().parent;
        }
    }
    above.len() as u64 + passing
}

/// Two layers side by side, 1,000 boxes in the first and 3,000 in the second: a query
/// over both for the first enters exactly its 1,000 leaves and their ancestors once the
/// unions are fresh, every internal node while they are stale, and finds the same proxies
/// either way.
fn masked_query_skips_the_other_layer<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let mut ids = Vec::new();
    for i in 0..4000u32 {
        let (x, y) = ((i % 100) as f32, (i / 100) as f32);
        let c = v::<V>([x, y, 0.0]);
        ids.push(
            tree.create_proxy(BoundingBox::from_center_half_extents(c, V::splat(0.4)), i)
                .unwrap(),
        );
    }
    for (i, &id) in ids.iter().enumerate() {
        // The left quarter in layer 1, the rest in layer 2.
        let layer = if i % 100 < 25 { 1 } else { 2 };
        tree.set_layers(id, Layers::new(layer, u32::MAX)).unwrap();
    }
    let everything = BoundingBox::from_min_max(v::<V>([-1.0; 3]), v::<V>([101.0; 3]));
    let run = |tree: &DynamicTree<V, u32>| {
        let before = tree.stats().nodes_visited;
        let mut found = Vec::new();
        tree.query_box_in(&everything, LayerTest::Memberships(1), |id, _| {
            found.push(id);
            true
        });
        (tree.stats().nodes_visited - before, found)
    };
    let (stale_visits, mut stale_found) = run(&tree);
    assert_eq!(
        stale_visits,
        nodes_entered(&tree, 1, false),
        "unpruned walk"
    );
    tree.refresh_layers();
    tree.validate().unwrap();
    let (fresh_visits, mut fresh_found) = run(&tree);
    stale_found.sort();
    fresh_found.sort();
    assert_eq!(stale_found, fresh_found);
    assert_eq!(fresh_found.len(), 1000);
    assert_eq!(
        fresh_visits,
        nodes_entered(&tree, 1, true),
        "pruned walk (unpruned: {stale_visits})"
    );
    assert!(
        fresh_visits * 2 < stale_visits,
        "pruned walk visited {fresh_visits} nodes, unpruned {stale_visits}"
    );
    // A changed layer keeps the unions fresh and exact, and the query follows it.
    tree.set_layers(ids[99], Layers::new(1, u32::MAX)).unwrap();
    tree.validate().unwrap();
    let (_, found) = run(&tree);
    assert!(found.contains(&ids[99]));
    assert_eq!(found.len(), 1001);
}

crate::kit::tests_2d_3d!(
    masked_query_skips_the_other_layer:
    masked_query_skips_the_other_layer_2d,
    masked_query_skips_the_other_layer_3d
);

/// A whole-tree build puts the proxies that interact with nothing in a subtree of their
/// own: with one box in ten interacting, spread evenly among the others, a search for
/// what interacts with everything visits about the interacting tenth of the tree, finds
/// exactly the interacting boxes, and the tree stays valid.
fn build_sets_inert_proxies_apart<V: Vector>() {
    let mut tree = DynamicTree::<V, u32>::with_margin(0.05);
    let mut ids = Vec::new();
    for i in 0..3000u32 {
        let c = v::<V>([(i % 60) as f32, (i / 60) as f32, (i % 7) as f32]);
        let id = tree
            .create_proxy(BoundingBox::from_center_half_extents(c, V::splat(0.5)), i)
            .unwrap();
        let layers = if i % 10 == 0 {
            Layers::ALL
        } else {
            Layers::new(2, 0)
        };
        tree.set_layers(id, layers).unwrap();
        ids.push(id);
    }
    // Rebuilt as a whole (a level spawned in one frame is built this way).
    tree.build(std::iter::empty()).unwrap();
    tree.refresh_layers();
    tree.validate().unwrap();
    let everything = BoundingBox::from_min_max(v::<V>([-1.0; 3]), v::<V>([61.0; 3]));
    let before = tree.stats().nodes_visited;
    let mut found = BTreeSet::new();
    tree.query_box_in(
        &everything,
        LayerTest::InteractsWith(Layers::ALL),
        |id, _| found.insert(id),
    );
    let visited = tree.stats().nodes_visited - before;
    let want: BTreeSet<ProxyId> = ids.iter().step_by(10).copied().collect();
    assert_eq!(found, want);
    // 300 leaves and their 299 ancestors, and the root: far from the 6,000 of the tree.
    assert!(visited <= 700, "visited {visited} nodes");
}

crate::kit::tests_2d_3d!(
    build_sets_inert_proxies_apart:
    build_sets_inert_proxies_apart_2d,
    build_sets_inert_proxies_apart_3d
);
