//! The sample tree's draws and the weighted seeding.
use super::*;

#[test]
fn the_tree_draws_in_proportion_to_the_weights() {
    // Three levels (2048² < 5·10⁶), weight only on a few points.
    let n = 5_000_000;
    let mut w = vec![0.0; n];
    for (i, v) in [(3, 1.0), (2047, 2.0), (2048, 1.0), (4_999_999, 4.0)] {
        w[i] = v;
    }
    let t = SampleTree::new(&w);
    assert_eq!(t.total(), 8.0);
    assert_eq!(t.pick(0.0), 3);
    assert_eq!(t.pick(0.99), 3);
    assert_eq!(t.pick(1.0), 2047);
    assert_eq!(t.pick(2.5), 2047);
    assert_eq!(t.pick(3.0), 2048);
    assert_eq!(t.pick(4.0), 4_999_999);
    assert_eq!(t.pick(7.99), 4_999_999);
    // Past the total (rounding of u·total): the last point of positive weight.
    assert_eq!(t.pick(8.0), 4_999_999);
}

#[test]
fn all_zero_weights_draw_uniformly() {
    let t = SampleTree::new(&[0.0; 10]);
    assert_eq!(t.total(), 0.0);
    assert_eq!(t.draw(0.0, 10), 0);
    assert_eq!(t.draw(0.95, 10), 9);
}

#[test]
fn one_weight_is_its_own_total() {
    let t = SampleTree::new(&[2.5]);
    assert_eq!(t.total(), 2.5);
    assert_eq!(t.pick(1.0), 0);
}
