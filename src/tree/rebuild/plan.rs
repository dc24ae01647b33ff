//! Rebuilding a subtree in two steps: a plan made from the tree as it stands, then written.
//!
//! [`DynamicTree::plan_rebuild`] only reads the tree: it collects the subtree's items (its
//! leaves, and the subtrees kept whole), splits them with the binned SAH of
//! [`DynamicTree::build`], lays the new nodes out over the old ones' slots (see
//! `tree::rebuild::layout`) and works out every new node, box, mark and height included.
//! [`DynamicTree::apply_rebuild`] then writes the new nodes and the items' links at once, and
//! refits the heights above. Planning is most of the work, and plans of subtrees that share
//! no node can be made at the same time on several threads (see `DynamicTree::optimize_on`).
//!
//! The new subtree has exactly as many internal nodes as the old one and takes back its
//! slots, the new top the old top's: the free list is left as it is, and no node outside the
//! subtree moves.

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::build::BuildItem;
use crate::tree::rebuild::layout::{NO_PARENT, SECOND, assign_slots};
use crate::tree::{DynamicTree, Link, Node, NodeId, Stamp};

/// A child in a plan: an item (its index, with this bit) or a new node (its index).
const ITEM: u32 = 1 << 31;

/// One new node of a plan, in the order the splits made them (parents first).
#[derive(Clone, Copy, Debug, Default)]
struct Planned<V: Vector> {
    /// Children: new nodes, or items with [`ITEM`].
    children: [u32; 2],
    boxes: [BoundingBox<V>; 2],
    stamps: [Stamp; 2],
    height: u16,
}

impl<V: Vector> Planned<V> {
    /// The box and mark its parent holds for it: those enclosing its children's.
    #[inline(always)]
    fn enclosing(&self) -> (BoundingBox<V>, Stamp) {
        (
            self.boxes[0].merged(&self.boxes[1]),
            self.stamps[0].max(self.stamps[1]),
        )
    }
}

/// The plan of a subtree's rebuild, and the buffers it is made in (kept between plans).
#[derive(Debug)]
pub(crate) struct RebuildPlan<V: Vector> {
    /// The subtree's top and where it hangs.
    top: NodeId,
    link: Link,
    /// The items, with the boxes and marks their parents hold for them.
    pub items: Vec<BuildItem<V>>,
    /// The slots the old internal nodes hold, which the new ones take.
    old: Vec<NodeId>,
    /// Each item's split keys and bins (see `DynamicTree::split`).
    keys: Vec<[f32; 4]>,
    bins: [Vec<u8>; 2],
    /// Ranges of items still to split: start, end, parent (a new node, or [`NO_PARENT`]), slot.
    ranges: Vec<(u32, u32, u32, u32)>,
    planned: Vec<Planned<V>>,
    /// The new nodes in layout order, their parents' positions in it (see
    /// `tree::rebuild::layout`), and each new node's position.
    order: Vec<u32>,
    parent: Vec<u32>,
    position: Vec<u32>,
    /// The slot of each position, and scratch space for choosing them.
    slots: Vec<NodeId>,
    pool: Vec<NodeId>,
    spare: Vec<NodeId>,
    /// Nodes still to visit while collecting the items; new nodes still to lay out.
    stack: Vec<BuildItem<V>>,
    walk: Vec<u32>,
}

impl<V: Vector> Default for RebuildPlan<V> {
    fn default() -> Self {
        Self {
            top: NodeId::NULL,
            link: Link::ROOT,
            items: Vec::new(),
            old: Vec::new(),
            keys: Vec::new(),
            bins: [Vec::new(), Vec::new()],
            ranges: Vec::new(),
            planned: Vec::new(),
            order: Vec::new(),
            parent: Vec::new(),
            position: Vec::new(),
            slots: Vec::new(),
            pool: Vec::new(),
            spare: Vec::new(),
            stack: Vec::new(),
            walk: Vec::new(),
        }
    }
}

impl<V: Vector> RebuildPlan<V> {
    /// Gives every buffer room for `items` entries, or for as many as the items have room for
    /// if that is more (a plan has at most that many of each): the buffers then grow
    /// together, and only when a rebuild has more items than any before it.
    fn reserve(&mut self, items: usize) {
        fn room_for<T>(buffer: &mut Vec<T>, room: usize) {
            buffer.reserve(room.saturating_sub(buffer.len()));
        }
        room_for(&mut self.items, items);
        let room = self.items.capacity();
        room_for(&mut self.old, room);
        room_for(&mut self.keys, room);
        for bins in &mut self.bins {
            room_for(bins, room);
        }
        room_for(&mut self.ranges, room);
        room_for(&mut self.planned, room);
        room_for(&mut self.order, room);
        room_for(&mut self.parent, room);
        room_for(&mut self.position, room);
        room_for(&mut self.slots, room);
        room_for(&mut self.pool, room);
        room_for(&mut self.spare, room);
        room_for(&mut self.walk, room);
    }

    /// Whether the plan changes anything (a subtree of one item does not).
    pub(crate) fn is_empty(&self) -> bool {
        self.planned.is_empty()
    }

    /// A planned child as the tree names it: the item's node, or the new node's slot.
    fn node_of(&self, child: u32) -> NodeId {
        if child & ITEM != 0 {
            self.items[(child & !ITEM) as usize].node
        } else {
            self.slots[self.position[child as usize] as usize]
        }
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// Plans the rebuild of the subtree under `top` into `plan`, reading the tree only;
    /// [`Self::apply_rebuild`] carries it out. Together they are [`Self::rebuild_subtree`],
    /// which says what the items are and how the first split is made.
    pub(crate) fn plan_rebuild(
        &self,
        top: NodeId,
        keep_height: u16,
        still_for: Stamp,
        plan: &mut RebuildPlan<V>,
    ) {
        plan.top = top;
        plan.link = self.link_of(top);
        plan.items.clear();
        plan.old.clear();
        plan.planned.clear();
        if top.is_leaf() || self.nodes[top.index()].height <= keep_height {
            return;
        }
        // Room at once for the largest candidate of the optimizer (a subtree of its rebuild
        // height has at most this many leaves), so that the buffers do not grow each time a
        // larger one comes along.
        plan.reserve(1 << self.optimizer.subtree_height(self.proxy_count));
        self.collect_plan_items(keep_height, still_for, plan);
        if plan.items.len() < 2 {
            return;
        }
        plan.reserve(plan.items.len());
        let first_split = if still_for > 0 {
            // Still items first.
            let items = &mut plan.items;
            let mut still = 0;
            for i in 0..items.len() {
                if self.mark_age(items[i].stamp) >= still_for {
                    items.swap(i, still);
                    still += 1;
                }
            }
            (still > 0 && still < items.len()).then_some(still)
        } else {
            None
        };
        Self::plan_splits(plan, first_split);
        self.plan_boxes(plan);
        Self::plan_layout(plan);
    }

    /// Puts in `plan.items` the items under `plan.top` in the order of a depth-first walk
    /// (first child first), and in `plan.old` the internal nodes above them.
    fn collect_plan_items(&self, keep_height: u16, still_for: Stamp, plan: &mut RebuildPlan<V>) {
        plan.stack.clear();
        plan.stack.push(BuildItem {
            aabb: *self.slot_box(plan.link),
            node: plan.top,
            stamp: self.slot_stamp(plan.link),
        });
        while let Some(item) = plan.stack.pop() {
            let id = item.node;
            if id.is_leaf()
                || self.nodes[id.index()].height <= keep_height
                || (still_for > 0 && self.mark_age(item.stamp) >= still_for)
            {
                plan.items.push(item);
                continue;
            }
            let node = &self.nodes[id.index()];
            for k in [1, 0] {
                plan.stack.push(BuildItem::child_of(node, k));
            }
            plan.old.push(id);
        }
    }

    /// Splits the items as [`Self::build_items`] does (the first split by `first_split` when
    /// given), numbering the new nodes parents first.
    fn plan_splits(plan: &mut RebuildPlan<V>, first_split: Option<usize>) {
        let count = plan.items.len();
        plan.keys.clear();
        plan.keys.extend(plan.items.iter().map(Self::sort_keys));
        plan.ranges.clear();
        plan.ranges.push((0, count as u32, NO_PARENT, 0));
        while let Some((lo, hi, parent, slot)) = plan.ranges.pop() {
            let (lo, hi) = (lo as usize, hi as usize);
            let child = if hi - lo == 1 {
                lo as u32 | ITEM
            } else {
                let mid = match first_split {
                    Some(mid) if plan.planned.is_empty() => mid,
                    _ => {
                        let range = (&mut plan.items[lo..hi], &mut plan.keys[lo..hi]);
                        lo + Self::split(range, &mut plan.bins)
                    }
                };
                let id = plan.planned.len() as u32;
                plan.planned.push(Planned::default());
                plan.ranges.push((mid as u32, hi as u32, id, 1));
                plan.ranges.push((lo as u32, mid as u32, id, 0));
                id
            };
            if parent != NO_PARENT {
                plan.planned[parent as usize].children[slot as usize] = child;
            }
        }
    }

    /// Works out each new node's children's boxes and marks, and its height, children first.
    fn plan_boxes(&self, plan: &mut RebuildPlan<V>) {
        for id in (0..plan.planned.len()).rev() {
            let mut node = plan.planned[id];
            let mut height = 0;
            for k in 0..2 {
                let child = node.children[k];
                let (aabb, stamp, h) = if child & ITEM != 0 {
                    let item = plan.items[(child & !ITEM) as usize];
                    (item.aabb, item.stamp, self.height_of(item.node))
                } else {
                    let below = &plan.planned[child as usize];
                    let (aabb, stamp) = below.enclosing();
                    (aabb, stamp, below.height)
                };
                node.boxes[k] = aabb;
                node.stamps[k] = stamp;
                height = height.max(h);
            }
            node.height = 1 + height;
            plan.planned[id] = node;
        }
    }

    /// Orders the new nodes as `tree::rebuild::layout` lays subtrees out and gives them the old
    /// nodes' slots, the top the old top's.
    fn plan_layout(plan: &mut RebuildPlan<V>) {
        plan.order.clear();
        plan.parent.clear();
        plan.walk.clear();
        plan.position.clear();
        plan.position.resize(plan.planned.len(), 0);
        plan.order.push(0);
        plan.parent.push(NO_PARENT);
        plan.walk.push(0);
        while let Some(id) = plan.walk.pop() {
            let at = plan.position[id as usize];
            let mut pending = [None, None];
            for (k, &child) in plan.planned[id as usize].children.iter().enumerate() {
                if child & ITEM == 0 {
                    plan.position[child as usize] = plan.order.len() as u32;
                    plan.order.push(child);
                    plan.parent.push(at | if k == 1 { SECOND } else { 0 });
                    pending[k] = Some(child);
                }
            }
            // First child's side first: pushed last.
            plan.walk.extend(pending[1]);
            plan.walk.extend(pending[0]);
        }
        plan.pool.clear();
        plan.pool.extend_from_slice(&plan.old);
        assign_slots(
            &plan.parent,
            plan.top,
            (&mut plan.pool, &mut plan.spare),
            &mut plan.slots,
        );
    }

    /// Carries out a plan of [`Self::plan_rebuild`] made on the tree as it stands (or as it
    /// stood, when the writes since touched nothing under the planned top): writes the new
    /// nodes into their slots, the items' links and the top's box and mark where it hangs,
    /// then refits the top's ancestors, whose heights may change (their boxes are exact
    /// already: the same leaves lie below).
    pub(crate) fn apply_rebuild(&mut self, plan: &RebuildPlan<V>) {
        if plan.is_empty() {
            return;
        }
        self.shape_changed();
        debug_assert_eq!(
            self.nodes[plan.top.index()].parent,
            plan.link,
            "a plan carried out on a tree that moved its top"
        );
        for (position, &id) in plan.order.iter().enumerate() {
            let new = &plan.planned[id as usize];
            let parent = plan.parent[position];
            let link = if parent == NO_PARENT {
                plan.link
            } else {
                Link::new(
                    plan.slots[(parent & !SECOND) as usize],
                    (parent >> 31) as usize,
                )
            };
            let slot = plan.slots[position];
            self.nodes[slot.index()] = Node {
                boxes: new.boxes,
                children: new.children.map(|child| plan.node_of(child)),
                parent: link,
                stamps: new.stamps,
                height: new.height,
            };
            for (k, &child) in new.children.iter().enumerate() {
                if child & ITEM != 0 {
                    self.set_link(plan.node_of(child), Link::new(slot, k));
                }
            }
        }
        let (aabb, stamp) = plan.planned[0].enclosing();
        let top_slot = plan.slots[0];
        if plan.link.is_root() {
            self.root = top_slot;
            self.root_box = aabb;
            self.root_stamp = stamp;
        } else {
            let parent = &mut self.nodes[plan.link.parent().index()];
            parent.children[plan.link.slot()] = top_slot;
            parent.boxes[plan.link.slot()] = aabb;
            parent.stamps[plan.link.slot()] = stamp;
        }
        let mut index = plan.link.parent_or_null();
        while !index.is_null() {
            let before = self.nodes[index.index()].height;
            self.refit_node(index);
            if self.nodes[index.index()].height == before {
                break;
            }
            index = self.parent_of(index);
        }
    }
}
