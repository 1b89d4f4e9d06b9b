//! Spreading host work (large inputs, the sampled checks) over every core with scoped
//! threads; the results never depend on the number of threads.

/// Runs `f(chunk index, chunk)` over `chunk_len`-sized chunks of `v` on every core.
pub fn chunks<T: Send>(v: &mut [T], chunk_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunks: Vec<(usize, &mut [T])> = v.chunks_mut(chunk_len.max(1)).enumerate().collect();
    let per_thread = chunks.len().div_ceil(threads).max(1);
    let mut it = chunks.into_iter().peekable();
    std::thread::scope(|s| {
        while it.peek().is_some() {
            let group: Vec<_> = it.by_ref().take(per_thread).collect();
            let f = &f;
            s.spawn(move || group.into_iter().for_each(|(c, chunk)| f(c, chunk)));
        }
    });
}

/// `items.iter().map(f)` on every core, in order.
pub fn map<I: Sync, O: Send + Default + Clone>(items: &[I], f: impl Fn(&I) -> O + Sync) -> Vec<O> {
    let mut out = vec![O::default(); items.len()];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = items.len().div_ceil(threads).max(1);
    chunks(&mut out, per, |c, slots| {
        for (k, slot) in slots.iter_mut().enumerate() {
            *slot = f(&items[c * per + k]);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn map_keeps_the_order() {
        let items: Vec<usize> = (0..1000).collect();
        let out = super::map(&items, |&i| i * 2);
        assert_eq!(out, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
        assert!(super::map(&[] as &[usize], |&i| i).is_empty());
    }

    #[test]
    fn chunks_see_their_index() {
        let mut v = vec![0usize; 10];
        super::chunks(&mut v, 3, |c, s| s.iter_mut().for_each(|x| *x = c));
        assert_eq!(v, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]);
    }
}
