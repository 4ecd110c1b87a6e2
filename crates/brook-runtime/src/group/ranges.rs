//! Sets of byte ranges: which bytes of a buffer a group member holds up to date.

/// Disjoint, sorted, non-adjacent half-open byte ranges `[start, end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByteRanges {
    ranges: Vec<(usize, usize)>,
}

impl ByteRanges {
    /// Adds `[start, end)`.
    pub fn insert(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let (mut start, mut end) = (start, end);
        // Ranges that touch or overlap the new one merge with it.
        let first = self.ranges.partition_point(|&(_, e)| e < start);
        let last = self.ranges.partition_point(|&(s, _)| s <= end);
        if first < last {
            start = start.min(self.ranges[first].0);
            end = end.max(self.ranges[last - 1].1);
        }
        self.ranges.splice(first..last, [(start, end)]);
    }

    /// Removes `[start, end)`.
    pub fn remove(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let first = self.ranges.partition_point(|&(_, e)| e <= start);
        let last = self.ranges.partition_point(|&(s, _)| s < end);
        let mut kept = Vec::with_capacity(2);
        if first < last {
            let (s, _) = self.ranges[first];
            let (_, e) = self.ranges[last - 1];
            if s < start {
                kept.push((s, start));
            }
            if e > end {
                kept.push((end, e));
            }
        }
        self.ranges.splice(first..last, kept);
    }

    /// The parts of `[start, end)` that are in the set, in order.
    pub fn within(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let first = self.ranges.partition_point(|&(_, e)| e <= start);
        self.ranges[first..]
            .iter()
            .take_while(|&&(s, _)| s < end)
            .map(|&(s, e)| (s.max(start), e.min(end)))
            .collect()
    }

    /// The parts of `[start, end)` that are not in the set, in order.
    pub fn gaps(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let mut gaps = Vec::new();
        let mut at = start;
        for (s, e) in self.within(start, end) {
            if s > at {
                gaps.push((at, s));
            }
            at = e;
        }
        if at < end {
            gaps.push((at, end));
        }
        gaps
    }

    /// How many bytes of `[start, end)` are in the set.
    pub fn covered(&self, start: usize, end: usize) -> usize {
        self.within(start, end).iter().map(|(s, e)| e - s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_merge_and_removals_split() {
        let mut set = ByteRanges::default();
        set.insert(10, 20);
        set.insert(30, 40);
        set.insert(20, 25);
        assert_eq!(set.within(0, 100), [(10, 25), (30, 40)]);
        set.insert(24, 31);
        assert_eq!(set.within(0, 100), [(10, 40)]);
        set.remove(15, 18);
        assert_eq!(set.within(0, 100), [(10, 15), (18, 40)]);
        set.remove(0, 12);
        set.remove(39, 50);
        assert_eq!(set.within(0, 100), [(12, 15), (18, 39)]);
        assert_eq!(set.gaps(0, 40), [(0, 12), (15, 18), (39, 40)]);
        assert_eq!(set.covered(13, 20), 4);
        set.remove(0, 100);
        assert_eq!(set, ByteRanges::default());
    }
}
