//! Text output, the before/after comparison, and the SVG timeline.
