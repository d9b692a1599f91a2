//! The grid prompt tokens are evaluated on, shared by the engine and the
//! prefix store: where a kept, lent or saved prefix may end.

/// How many tokens a prompt must share with an earlier one beyond its
/// system message before that shared prefix gets a saved state of its own:
/// loading a state (tens of MB, checksummed) must cost less than evaluating it.
pub(crate) const MIN_SHARED: usize = 48;

/// Prompt tokens are evaluated in batches of the cells of a grid of this
/// many positions, and every prefix kept, lent or saved ends on the grid.
/// The floats a batch gives depend on which tokens are in it, so with
/// batches cut anywhere, a prompt's reply changed with whichever saved
/// state or cached sequence it started from; on the grid, every token is
/// evaluated beside the same ones each time, and a run is repeatable.
pub(crate) const GRID: usize = 16;

/// `n` rounded down to the grid.
pub(crate) fn on_grid(n: usize) -> usize {
    n / GRID * GRID
}
