//! The build's split: which side of a split by size the larger items take.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::build::BuildItem;
use crate::tree::{DynamicTree, NodeId, ProxyId};

use super::tree_scene::{lcg, v};

/// Items 0 to `large - 1` are boxes of side 40 spread over a region 100 wide; the others
/// boxes of side 0.1 packed in its middle, so that no cut through space separates the
/// sizes and a cut by size costs far less (the small boxes' region is small). The split
/// must take the cut by size, and put the large boxes in its first part: a cast that
/// starts inside both parts goes into the first one, and a large box is the likelier to
/// hold a hit near the cast's start.
fn size_split_puts_large_first<V: Vector>() {
    let mut r = lcg(7);
    for (large, small) in [(20, 200), (3, 60), (10, 30)] {
        let mut items: Vec<BuildItem<V>> = (0..large + small)
            .map(|i| {
                let (center, half) = if i < large {
                    (v::<V>([r(), r(), r()].map(|x| 100.0 * x)), 20.0)
                } else {
                    (v::<V>([r(), r(), r()].map(|x| 49.0 + 2.0 * x)), 0.05)
                };
                BuildItem {
                    aabb: BoundingBox::from_center_half_extents(center, V::splat(half)),
                    node: NodeId::leaf(ProxyId(i as u32)),
                    stamp: 0,
                }
            })
            .collect();
        let mut keys: Vec<[f32; 4]> = items.iter().map(DynamicTree::<V, ()>::sort_keys).collect();
        let mut bins = [Vec::new(), Vec::new()];
        let first = DynamicTree::<V, ()>::split((&mut items, &mut keys), &mut bins);
        let is_large = |item: &BuildItem<V>| (item.node.proxy().0 as usize) < large;
        assert_eq!(
            first, large,
            "{large} large boxes among {small}: the cut by size"
        );
        assert!(
            items[..first].iter().all(is_large),
            "the first part holds the large boxes"
        );
        assert!(
            !items[first..].iter().any(is_large),
            "the second part holds the small boxes"
        );
        // The keys moved with their items.
        for (item, key) in items.iter().zip(&keys) {
            assert_eq!(*key, DynamicTree::<V, ()>::sort_keys(item));
        }
    }
}

both_dims!(size_split_puts_large_first);
