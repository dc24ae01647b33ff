//! Refitting the tree on several threads.
//!
//! After a large batch of moves ([`DynamicTree::move_proxies_parallel`]), every internal node under
//! a changed path gets its exact box again, children first. Subtrees of two nodes, neither above
//! the other, share no node, so:
//!
//! 1. the tree's first levels are walked on the calling thread, down to a depth where there
//!    are a few subtrees per thread: their roots, in depth-first order, are the tasks;
//! 2. the tasks run on the threads, each refitting its subtree in place and returning its box,
//!    whether it holds a change, and the leaves it marked moved;
//! 3. the first levels are refitted on the calling thread, taking each task's box where its
//!    subtree hangs.
//!
//! Each node is visited and written once, by one thread: the boxes, the marks and the count of
//! moved leaves are exactly those of the serial refit. It also stores the boxes of the leaves whose
//! bits are set as it passes their parents ([`RefitContext::take_leaf`]).
//!
//! # Why `unsafe`
//!
//! The tasks write nodes of one arena at the same time, each its own subtree; safe Rust lends a
//! slice to one writer or to readers only, and a subtree's nodes are scattered over the arena.
//! [`SharedNodes`] lends the arena to every task through a raw pointer, and the walk below keeps
//! the tasks apart by checking the tree's links as it goes (`accept`), so that no node is ever
//! reached by two visits, even in a tree whose links were wrong. The pointer is used only while
//! `refit_root_parallel` holds the arena borrowed, and its tasks all return before it does (the
//! contract of [`TaskRunner`]; the tasks catch their own panics). `docs/bench/README.md` ("The
//! parallel step") measures the gain over the serial refit.

use core::marker::PhantomData;
use std::sync::{Mutex, PoisonError};

use crate::Vector;
use crate::geometry::BoundingBox;
use crate::tree::arena::age_at;
use crate::tree::constants::REFIT_TASKS_PER_THREAD;
use crate::tree::parallel::runner::TaskRunner;
use crate::tree::{DynamicTree, Link, Node, NodeId, Stamp};

/// The arena's nodes, lent to a parallel refit's tasks, each writing only the nodes it accepted
/// ([`SharedNodes::accept`]).
struct SharedNodes<'a, V: Vector> {
    ptr: *mut Node<V>,
    len: usize,
    /// The arena is borrowed mutably by this value.
    borrow: PhantomData<&'a mut [Node<V>]>,
}

// SAFETY: the pointer is to an arena of `Node<V>` (plain data, `Send` and `Sync` as `V` is) that
// the refit borrows mutably for as long as this value lives. Sharing it between threads is sound
// because every read and write through it goes to a node the visit has accepted, and no node is
// accepted twice (see `accept`), except the two fields that `accept` reads, which nobody writes
// during a refit.
#[allow(unsafe_code)]
unsafe impl<V: Vector> Sync for SharedNodes<'_, V> {}

impl<'a, V: Vector> SharedNodes<'a, V> {
    fn new(nodes: &'a mut [Node<V>]) -> Self {
        Self {
            ptr: nodes.as_mut_ptr(),
            len: nodes.len(),
            borrow: PhantomData,
        }
    }

    /// Whether `child`, found in slot `slot` of the accepted node `parent` of height `height`, is
    /// an internal node that this visit may take as its own: in the arena, hanging from that very
    /// slot by its own link, and lower than `parent`.
    ///
    /// Every visit, the serial first levels and the tasks alike, reaches a node only through this
    /// check (the root, through the tree's root link). A node's link names one slot of one parent,
    /// so two visits accepting the same node must come from the same slot of the same accepted
    /// parent, and by the same argument from the same grandparent, up to where they started: the
    /// root (visited once) or a task's root (each given to one task, and skipped by the first
    /// levels). Heights fall at every step, so no visit comes back to a node through a cycle
    /// either.
    #[allow(unsafe_code)]
    fn accept(&self, parent: NodeId, slot: usize, height: u16, child: NodeId) -> bool {
        if child.is_leaf() || child.index() >= self.len {
            return false;
        }
        let at = self.ptr.wrapping_add(child.index());
        // SAFETY: `at` is in the arena (checked above). Only the fields `parent` and `height` are
        // read, through raw field pointers (no reference to the node is made): the node may belong
        // to another task, which writes only its `boxes` and `stamps`, other memory, and nothing
        // writes these two during a refit.
        let (link, child_height) = unsafe {
            (
                core::ptr::addr_of!((*at).parent).read(),
                core::ptr::addr_of!((*at).height).read(),
            )
        };
        link == Link::new(parent, slot) && child_height < height
    }

    /// The accepted node `id`'s children, boxes, marks and height.
    #[allow(unsafe_code)]
    fn read(&self, id: NodeId) -> Node<V> {
        debug_assert!(id.index() < self.len);
        // SAFETY: `id` was accepted by this visit (in the arena, and no other visit accepts it), so
        // nothing else reads or writes it meanwhile.
        unsafe { self.ptr.add(id.index()).read() }
    }

    /// Stores the accepted node `id`'s boxes and marks.
    #[allow(unsafe_code)]
    fn write(&self, id: NodeId, boxes: [BoundingBox<V>; 2], stamps: [Stamp; 2]) {
        debug_assert!(id.index() < self.len);
        let at = self.ptr.wrapping_add(id.index());
        // SAFETY: as in `read`: the node is this visit's alone. The two fields are written through
        // raw field pointers, leaving `parent` and `height` (which other visits' `accept` may read)
        // untouched.
        unsafe {
            core::ptr::addr_of_mut!((*at).boxes).write(boxes);
            core::ptr::addr_of_mut!((*at).stamps).write(stamps);
        }
    }
}

/// What a refit needs besides the nodes: the epoch, the age below which an internal child is
/// refitted, and the changed proxies with their boxes.
struct RefitContext<'a, V: Vector> {
    epoch: Stamp,
    age: u16,
    /// One bit per proxy: set for those whose leaf takes its box from `fat_boxes`.
    changed: &'a [u64],
    fat_boxes: &'a [BoundingBox<V>],
}

/// A subtree refitted: its box, whether it holds a change, and its counts.
type Refitted<V> = (BoundingBox<V>, bool, RefitCount);

/// What a refit counts: the leaves it marked moved and the internal nodes it refitted.
#[derive(Clone, Copy, Debug, Default)]
struct RefitCount {
    moved: usize,
    visited: usize,
}

impl core::ops::AddAssign for RefitCount {
    fn add_assign(&mut self, other: Self) {
        self.moved += other.moved;
        self.visited += other.visited;
    }
}

/// The task roots of a parallel refit and their results, kept between refits.
#[derive(Debug, Default)]
pub(crate) struct RefitScratch<V: Vector> {
    roots: Vec<NodeId>,
    results: Vec<Mutex<Option<Refitted<V>>>>,
}

/// What a visit of the first levels does at the internal children it accepts at a given depth
/// (above it, it refits them).
enum Below<'r, V: Vector> {
    /// Lists those at this depth as task roots and goes no deeper (the first pass).
    List(usize, &'r mut Vec<NodeId>),
    /// Takes the boxes of those at this depth from the tasks' results, in the order they were
    /// listed, from the given index on (the last pass).
    Take(usize, &'r [Mutex<Option<Refitted<V>>>], usize),
}

/// A task's refit of the accepted node `id`'s subtree, children first: its box and whether it holds
/// a change; the leaves it marks moved and the nodes it refits count in `count`.
fn refit_as_task<V: Vector>(
    context: &RefitContext<'_, V>,
    nodes: &SharedNodes<'_, V>,
    id: NodeId,
    count: &mut RefitCount,
) -> (BoundingBox<V>, bool) {
    let epoch = context.epoch;
    count.visited += 1;
    let node = nodes.read(id);
    let (mut boxes, mut stamps) = (node.boxes, node.stamps);
    for k in 0..2 {
        let child = node.children[k];
        if child.is_leaf() {
            context.take_leaf(child, &mut boxes[k], &mut stamps[k], &mut count.moved);
        } else if u16::from(age_at(epoch, stamps[k])) < context.age
            && nodes.accept(id, k, node.height, child)
        {
            let (aabb, changed) = refit_as_task(context, nodes, child, count);
            boxes[k] = aabb;
            if changed {
                stamps[k] = epoch;
            }
        }
    }
    nodes.write(id, boxes, stamps);
    (
        boxes[0].merged(&boxes[1]),
        (stamps[0] == epoch) | (stamps[1] == epoch),
    )
}

impl<V: Vector> RefitContext<'_, V> {
    /// [`refit_as_task`] of the accepted node `id`, with its counts.
    fn refit_subtree(&self, nodes: &SharedNodes<'_, V>, id: NodeId) -> Refitted<V> {
        let mut count = RefitCount::default();
        let (aabb, changed) = refit_as_task(self, nodes, id, &mut count);
        (aabb, changed, count)
    }

    /// Gives `leaf` its box from the move cache and, if its proxy's bit is set, its mark (counted
    /// in `moved` if new), in `aabb` and `stamp`, as [`DynamicTree::write_slot`] would.
    #[inline(always)]
    fn take_leaf(
        &self,
        leaf: NodeId,
        aabb: &mut BoundingBox<V>,
        stamp: &mut Stamp,
        moved: &mut usize,
    ) {
        let proxy = leaf.proxy().index();
        // No branch on the bit, which is as good as random: a leaf whose bit is clear gets its box
        // again (the move cache holds each proxy's box in its slot) and keeps its mark.
        let bit = self
            .changed
            .get(proxy / 64)
            .is_some_and(|w| w >> (proxy % 64) & 1 != 0);
        if let Some(fat) = self.fat_boxes.get(proxy) {
            *aabb = *fat;
        }
        *moved += usize::from(bit & (*stamp != self.epoch));
        *stamp = if bit { self.epoch } else { *stamp };
    }

    /// Refits the accepted node `id` of the first levels, at depth `depth` (or, while listing, only
    /// walks them); `below` says what happens at the task roots. Returns the node's box, whether it
    /// holds a change, and the counts of its subtree (while listing, of the levels walked).
    fn refit(
        &self,
        nodes: &SharedNodes<'_, V>,
        id: NodeId,
        depth: usize,
        below: &mut Below<'_, V>,
    ) -> Refitted<V> {
        let node = nodes.read(id);
        let (mut boxes, mut stamps) = (node.boxes, node.stamps);
        let mut count = RefitCount {
            moved: 0,
            visited: 1,
        };
        for k in 0..2 {
            let child = node.children[k];
            if child.is_leaf() {
                self.take_leaf(child, &mut boxes[k], &mut stamps[k], &mut count.moved);
                continue;
            }
            if u16::from(age_at(self.epoch, stamps[k])) >= self.age
                || !nodes.accept(id, k, node.height, child)
            {
                continue;
            }
            let (aabb, changed, below_count) = match below {
                Below::List(at, roots) if depth + 1 == *at => {
                    roots.push(child);
                    continue;
                }
                Below::Take(at, results, next) if depth + 1 == *at => {
                    let taken = results.get(*next).and_then(|result| {
                        result.lock().unwrap_or_else(PoisonError::into_inner).take()
                    });
                    *next += 1;
                    // A task that did not run is refitted here.
                    taken.unwrap_or_else(|| self.refit_subtree(nodes, child))
                }
                _ => self.refit(nodes, child, depth + 1, below),
            };
            boxes[k] = aabb;
            stamps[k] = if changed { self.epoch } else { stamps[k] };
            count += below_count;
        }
        if !matches!(below, Below::List(..)) {
            nodes.write(id, boxes, stamps);
        }
        (
            boxes[0].merged(&boxes[1]),
            (stamps[0] == self.epoch) | (stamps[1] == self.epoch),
            count,
        )
    }
}

impl<V: Vector, T> DynamicTree<V, T> {
    /// The refit of every internal node under nodes marked less than `age` updates ago (`u16::MAX`:
    /// every node), children first, its tasks run by `runner`; leaves whose proxy's bit is set in
    /// `changed` take their boxes from the move cache (which must be on). The root must be internal
    /// and low enough to recurse. Boxes, marks, moved count and return value (internal nodes
    /// refitted) match the serial refit after [`Self::write_slot`] per changed leaf.
    pub(crate) fn refit_root_parallel(
        &mut self,
        age: u16,
        changed: &[u64],
        runner: &dyn TaskRunner,
    ) -> usize {
        let threads = runner.threads();
        let wanted = threads
            .saturating_mul(REFIT_TASKS_PER_THREAD)
            .min(self.proxy_count / self.thresholds.min_proxies_per_task);
        // Depth of the task roots: about `wanted` nodes there in a balanced tree.
        let depth = wanted.max(1).next_power_of_two().trailing_zeros() as usize;
        let context = RefitContext {
            epoch: self.epoch,
            age,
            changed,
            fat_boxes: &self.fat_boxes,
        };
        let root = self.root;
        // The root is read without `accept`: it must be an internal node of the arena.
        if root.is_null() || root.is_leaf() || root.index() >= self.nodes.len() {
            return 0;
        }
        let nodes = SharedNodes::new(&mut self.nodes);
        let RefitScratch {
            mut roots,
            mut results,
        } = core::mem::take(&mut self.scratch.refit);
        roots.clear();
        if depth > 0 && threads > 1 {
            context.refit(&nodes, root, 0, &mut Below::List(depth, &mut roots));
        }
        if results.len() < roots.len() {
            results.resize_with(roots.len(), Default::default);
        }
        for result in &mut results {
            *result.get_mut().unwrap_or_else(PoisonError::into_inner) = None;
        }
        if roots.len() > 1 {
            self.parallel_refits += 1;
            // No task unwinds into the runner (see `TaskRunner`'s safety contract): a panic (the
            // refit has no path that panics) is held and goes on here once `run` has returned.
            let panicked = Mutex::new(None);
            runner.run(roots.len(), &|task| {
                let refit = || {
                    let refitted = context.refit_subtree(&nodes, roots[task]);
                    *results[task].lock().unwrap_or_else(PoisonError::into_inner) = Some(refitted);
                };
                if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(refit)) {
                    panicked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get_or_insert(panic);
                }
            });
            if let Some(panic) = panicked
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner)
            {
                std::panic::resume_unwind(panic);
            }
        }
        let (aabb, changed, count) = if roots.is_empty() {
            context.refit_subtree(&nodes, root)
        } else {
            context.refit(&nodes, root, 0, &mut Below::Take(depth, &results, 0))
        };
        self.scratch.refit = RefitScratch { roots, results };
        self.moved_count += count.moved;
        self.root_box = aabb;
        if changed {
            self.root_stamp = self.epoch;
        }
        self.exact = true;
        count.visited
    }
}
