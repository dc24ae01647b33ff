//! `bevy_transform_interpolation` and teleports (feature `interpolation`).

use bevy::prelude::*;
use bevy_transform_interpolation::{RotationEasingState, ScaleEasingState, TranslationEasingState};

use crate::plugin::Teleported;

/// Observer: [`Teleported`] inserted. The entity's easing starts over from where it is
/// now, so the frames until the next fixed tick show it at its destination instead of
/// sliding it there from where it was (a jump made in `FixedUpdate` would otherwise be
/// eased like a motion). Its children's transforms are relative to it and need nothing.
pub(crate) fn on_teleported_easing(
    event: On<Insert, Teleported>,
    mut states: Query<(
        Option<&mut TranslationEasingState>,
        Option<&mut RotationEasingState>,
        Option<&mut ScaleEasingState>,
    )>,
) {
    if let Ok((translation, rotation, scale)) = states.get_mut(event.event_target()) {
        if let Some(mut state) = translation {
            state.start = None;
        }
        if let Some(mut state) = rotation {
            state.start = None;
        }
        if let Some(mut state) = scale {
            state.start = None;
        }
    }
}
