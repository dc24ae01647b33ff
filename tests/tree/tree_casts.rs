//! The tree's own ray and box casts (`DynamicTree::cast_ray`, `cast_box`, `ray_hits`),
//! without the plugin, against brute force, in 2D and 3D.
//!
//! Each proxy stands for a shape inside its tight box: the box itself or the ball
//! inscribed in it. The exact tests the casts are given are the oracle's own (a slab test
//! and a quadratic for rays, a first-contact search for boxes, in `f64`), and some proxies
//! are rejected as a filter would. The closest hit the tree returns must be the minimum
//! of the same exact test over every proxy: the traversal and its pruning by fat boxes are
//! what is checked. Directions have random lengths (tiny, about one, huge), ranges are
//! random, zero or infinite, and the tree changes between rounds (moves, teleports,
//! removals, insertions).

use bevy_aabb_tree::{BoundingBox, DynamicTree, ProxyId, Ray, Vector};
use glam::{DVec3, Vec2, Vec3};

use crate::kit::rng;
use rng::Rng;

use crate::kit::oracle;
use oracle::{Solid, first_contact, random_direction, random_max_t, ray_entry};

/// What the test knows of one proxy: its tight box, the shape in it, and whether the
/// casts' exact test rejects it (as a layer filter would).
#[derive(Clone, Copy, Debug)]
struct Item {
    tight: [DVec3; 2],
    ball: bool,
    rejected: bool,
}

impl Item {
    fn solid(&self, dims: usize) -> Solid {
        let [min, max] = self.tight;
        if self.ball {
            let half = (max - min) * 0.5;
            let radius = if dims == 2 {
                half.x.min(half.y)
            } else {
                half.min_element()
            };
            Solid::Ball {
                center: (min + max) * 0.5,
                radius,
            }
        } else {
            Solid::Box { min, max }
        }
    }
}

fn to_v<V: Vector>(p: DVec3) -> V {
    V::truncate_from_3d(p.as_vec3())
}

fn to_d<V: Vector>(p: V) -> DVec3 {
    p.extend_to_3d().as_dvec3()
}

/// A random tight box, rounded to `f32` so that the tree and the oracle see the same one.
fn random_item<V: Vector>(rng: &mut Rng, extent: f32) -> (BoundingBox<V>, Item) {
    let c: V = V::truncate_from_3d(Vec3::new(
        rng.range(-extent, extent),
        rng.range(-extent, extent),
        rng.range(-extent, extent),
    ));
    let h: V = V::truncate_from_3d(Vec3::new(
        rng.range(0.05, 1.5),
        rng.range(0.05, 1.5),
        rng.range(0.05, 1.5),
    ));
    let b = BoundingBox::from_min_max(c - h, c + h);
    let item = Item {
        tight: [to_d(b.min), to_d(b.max)],
        ball: rng.chance(0.5),
        rejected: rng.chance(0.15),
    };
    (b, item)
}

fn tree_casts<V: Vector>(seed: u64) {
    let dims = V::DIM;
    let mut rng = Rng::new(seed);
    let extent = if dims == 2 { 20.0 } else { 7.0 };
    let mut tree = DynamicTree::<V, u32>::new();
    let mut items: Vec<(ProxyId, Item)> = Vec::new();
    for _ in 0..150 {
        let (b, item) = random_item::<V>(&mut rng, extent);
        let id = tree.create_proxy(b, 0).unwrap();
        items.push((id, item));
    }
    let mut checked = [0usize; 4];
    for round in 0..6 {
        // Change the tree: small moves (kept fat boxes), teleports, removals, insertions.
        for _ in 0..40 {
            let k = rng.below(items.len());
            let pick = rng.unit();
            if pick < 0.6 {
                let (b, item) = if pick < 0.4 {
                    let [min, max] = items[k].1.tight;
                    let step = DVec3::new(
                        rng.range(-0.2, 0.2) as f64,
                        rng.range(-0.2, 0.2) as f64,
                        rng.range(-0.2, 0.2) as f64,
                    );
                    let b = BoundingBox::from_min_max(to_v::<V>(min + step), to_v::<V>(max + step));
                    let item = Item {
                        tight: [to_d(b.min), to_d(b.max)],
                        ..items[k].1
                    };
                    (b, item)
                } else {
                    random_item::<V>(&mut rng, extent)
                };
                let displacement: V = V::truncate_from_3d(Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ));
                tree.move_proxy(items[k].0, b, displacement).unwrap();
                items[k].1 = item;
            } else if pick < 0.8 && items.len() > 20 {
                let (id, _) = items.swap_remove(k);
                tree.destroy_proxy(id).unwrap();
            } else {
                let (b, item) = random_item::<V>(&mut rng, extent);
                items.push((tree.create_proxy(b, 0).unwrap(), item));
            }
        }
        tree.validate().unwrap();
        let lookup = |id: ProxyId| items.iter().find(|(p, _)| *p == id).unwrap().1;

        for i in 0..300 {
            let mut unit = || f64::from(rng.unit());
            let o = DVec3::new(
                (unit() * 2.0 - 1.0) * f64::from(extent) * 1.3,
                (unit() * 2.0 - 1.0) * f64::from(extent) * 1.3,
                if dims == 2 {
                    0.0
                } else {
                    (unit() * 2.0 - 1.0) * f64::from(extent) * 1.3
                },
            );
            let d = random_direction(&mut unit, dims);
            let max_t = random_max_t(&mut unit, d.length(), 3.0 * f64::from(extent));
            let half = DVec3::new(
                unit() * 1.5,
                unit() * 1.5,
                if dims == 2 { 0.0 } else { unit() * 1.5 },
            );
            let (ov, dv, hv): (V, V, V) = (to_v(o), to_v(d), to_v(half));
            // What the tree is given, rounded to `f32`; the oracle works on the same values.
            let (o, d, half) = (to_d(ov), to_d(dv), to_d(hv));
            let max_t32 = max_t as f32;
            let what = format!(
                "seed {seed} round {round} query {i}: origin {o} direction {d} half {half} max_t {max_t}"
            );
            let ray = Ray::new(ov, dv);

            // The exact tests, rounded to the `f32` parameter the tree compares.
            let ray_t = |item: &Item| -> Option<f32> {
                if item.rejected {
                    return None;
                }
                let t = ray_entry(o, d, item.solid(dims), f64::from(max_t32))? as f32;
                (t <= max_t32).then_some(t)
            };
            let cast_t = |item: &Item| -> Option<f32> {
                if item.rejected {
                    return None;
                }
                let t =
                    first_contact(o, half, d, item.solid(dims), f64::from(max_t32), 0.0)? as f32;
                (t <= max_t32).then_some(t)
            };

            for (kind, exact) in [
                ("cast_ray", &ray_t as &dyn Fn(&Item) -> Option<f32>),
                ("cast_box", &cast_t),
            ] {
                let mut asked = 0usize;
                let got = if kind == "cast_ray" {
                    tree.cast_ray(&ray, max_t32, |id, _| {
                        asked += 1;
                        exact(&lookup(id))
                    })
                } else {
                    tree.cast_box(&ray, hv, max_t32, |id, _| {
                        asked += 1;
                        exact(&lookup(id))
                    })
                };
                let want = items
                    .iter()
                    .filter_map(|(id, item)| Some((exact(item)?, *id)))
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                match (got, want) {
                    (None, None) => {}
                    (Some(hit), Some((t, _))) => {
                        assert_eq!(hit.t, t, "{kind} {what}: closest t");
                        assert_eq!(
                            exact(&lookup(hit.proxy)),
                            Some(t),
                            "{kind} {what}: the proxy returned is hit at the closest t"
                        );
                        checked[usize::from(kind == "cast_box")] += 1;
                    }
                    (got, want) => panic!("{kind} {what}: tree {got:?}, brute force {want:?}"),
                }
                assert!(asked <= items.len(), "{kind} {what}: asked {asked} times");
            }

            // Every proxy whose shape the ray certainly enters is reported, once, at a `t`
            // no later than the shape's (the fat box encloses it).
            let mut reported: Vec<(ProxyId, f32)> = Vec::new();
            tree.ray_hits(&ray, max_t32, |id, _, t| {
                reported.push((id, t));
                true
            });
            let mut ids: Vec<ProxyId> = reported.iter().map(|r| r.0).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), reported.len(), "ray_hits {what}: duplicates");
            for &(id, t) in &reported {
                assert!(
                    t >= 0.0 && t <= max_t32,
                    "ray_hits {what}: {id:?} at {t} out of range"
                );
            }
            for (id, item) in &items {
                let solid = item.solid(dims);
                let Some(t) = ray_entry(o, d, solid.shrunk(1e-4), f64::from(max_t32)) else {
                    continue;
                };
                let hit = reported.iter().find(|r| r.0 == *id);
                assert!(
                    hit.is_some_and(|h| f64::from(h.1) <= t + 1e-6 * (1.0 + t)),
                    "ray_hits {what}: {id:?} entered at {t}, reported {hit:?}"
                );
                checked[2] += 1;
            }

            // Stopping after the first proxy reports exactly one.
            let mut count = 0;
            tree.ray_hits(&ray, max_t32, |_, _, _| {
                count += 1;
                false
            });
            assert_eq!(count, reported.len().min(1), "ray_hits {what}: stop");
            checked[3] += 1;
        }
    }
    assert!(
        checked[..3].iter().all(|&c| c > 300),
        "too few hits to test anything: {checked:?}"
    );
    eprintln!("hits checked (ray, box, all ray hits, stops): {checked:?}");
}

#[test]
fn tree_casts_2d() {
    for seed in [1, 2] {
        tree_casts::<Vec2>(seed);
    }
}

#[test]
fn tree_casts_3d() {
    for seed in [1, 2] {
        tree_casts::<Vec3>(seed);
    }
}

/// A ray with an axis parallel to the box (direction 0 there) whose origin and box sit
/// near `-f32::MAX` and `f32::MAX` on that axis, and a direction so large on another axis
/// that its reciprocal is subnormal: the tree's casts give the entry parameter of
/// `Ray::box_hit_at` bit for bit (a subnormal here), not the 0 that a NaN from
/// `inf * 0` on the parallel axis would make of it. Found by the fuzz target.
#[test]
fn ray_parallel_axis_at_the_edge_of_f32() {
    let ray = Ray::new(
        Vec3::new(-2.75, -2.5, -f32::MAX),
        Vec3::new(-f32::MAX, -16.140116, 0.0),
    );
    let aabb = BoundingBox {
        min: Vec3::new(-34.083374, -1e30, -f32::MAX),
        max: Vec3::new(-5.583372, 1e30, f32::MAX),
    };
    let want = ray.box_hit_at(&aabb, 1.5).unwrap();
    assert!(want > 0.0 && want < f32::MIN_POSITIVE, "{want}");
    let mut tree = DynamicTree::<Vec3, u32>::with_margin(0.0);
    let id = tree.build([(aabb, 0)]).unwrap()[0];
    assert_eq!(tree.fat_box(id), Some(aabb));
    let mut hits = Vec::new();
    tree.ray_hits(&ray, 1.5, |proxy, _, t| {
        hits.push((proxy, t.to_bits()));
        true
    });
    assert_eq!(hits, [(id, want.to_bits())]);
    let hit = tree
        .cast_ray(&ray, 1.5, |_, _| ray.box_hit_at(&aabb, 1.5))
        .unwrap();
    assert_eq!((hit.proxy, hit.t.to_bits()), (id, want.to_bits()));
}
