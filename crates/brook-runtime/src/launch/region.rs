//! The execution region of a map kernel: `domainOffset`/`domainSize` (seed 001 section 1.8).
//!
//! Without them every instance of the domain runs. With a size, only the box from the offset
//! (default 0) of that size runs; `instance()` and `indexof` keep giving absolute positions, and
//! inputs are read where those positions put them. A kernel with no stream defining a domain
//! (for example a scatter kernel over values only) runs over the box from 0 to offset + size.
//! Both are given fastest axis first, as `uint4`s; components past the domain's rank must be 0
//! (offset) or at most 1 (size).

use super::args::LaunchOptions;
use super::checker::{Check, Shapes};
use crate::error::LaunchProblem;
use crate::plan::ExecRegion;
use crate::stream::addressing::Dims;

/// The domain rank a size asks for: up to its last component above 1 (at least 1).
fn rank_of(size: &[usize; 4]) -> usize {
    size.iter().rposition(|&s| s > 1).map_or(1, |i| i + 1)
}

fn problem(text: String) -> LaunchProblem {
    LaunchProblem::ExecDomain(text)
}

/// The domain and region of a launch whose streams give `domain` (or none).
pub fn exec_region(domain: Option<Dims>, options: &LaunchOptions) -> Check<Shapes> {
    let offset_x_first = options.domain_offset.unwrap_or([0; 4]);
    let Some(size_x_first) = options.domain_size else {
        let Some(domain) = domain else {
            return Err(LaunchProblem::NoDomain);
        };
        if options.domain_offset.is_some_and(|o| o != [0; 4]) {
            return Err(problem("a domain offset needs a domain size too".into()));
        }
        let region = ExecRegion {
            origin: smallvec::smallvec![0; domain.len()],
            size: domain.clone(),
        };
        return Ok(Shapes {
            domain,
            region,
            reduction_tile: None,
        });
    };
    let domain = domain.unwrap_or_else(|| {
        let rank = rank_of(&size_x_first).max(rank_of(&offset_x_first.map(|o| o + 1)));
        (0..rank)
            .rev()
            .map(|k| offset_x_first[k] + size_x_first[k].max(1))
            .collect()
    });
    let rank = domain.len();
    for k in rank..4 {
        if offset_x_first[k] != 0 || size_x_first[k] > 1 {
            return Err(problem(format!(
                "the domain {domain:?} has {rank} dimension(s), but the offset {offset_x_first:?} or size {size_x_first:?} (fastest axis first) reaches axis {k}"
            )));
        }
    }
    let origin: Dims = (0..rank).rev().map(|k| offset_x_first[k]).collect();
    let size: Dims = (0..rank).rev().map(|k| size_x_first[k]).collect();
    for axis in 0..rank {
        if size[axis] == 0 {
            return Err(problem(format!(
                "the domain size {size_x_first:?} (fastest axis first) is 0 along axis {}",
                rank - 1 - axis
            )));
        }
        if origin[axis] + size[axis] > domain[axis] {
            return Err(problem(format!(
                "offset {offset_x_first:?} + size {size_x_first:?} (fastest axis first) is outside the domain {:?}",
                domain.iter().rev().collect::<Vec<_>>()
            )));
        }
    }
    Ok(Shapes {
        domain,
        region: ExecRegion { origin, size },
        reduction_tile: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(offset: [usize; 4], size: [usize; 4]) -> LaunchOptions {
        LaunchOptions {
            domain_offset: Some(offset),
            domain_size: Some(size),
            ..LaunchOptions::default()
        }
    }

    #[test]
    fn a_region_inside_the_domain() {
        let shapes = exec_region(
            Some(smallvec::smallvec![4, 6]),
            &options([1, 2, 0, 0], [3, 2, 0, 0]),
        )
        .unwrap();
        assert_eq!(shapes.region.origin.as_slice(), [2, 1]);
        assert_eq!(shapes.region.size.as_slice(), [2, 3]);
    }

    #[test]
    fn a_region_without_streams_defines_the_domain() {
        let shapes = exec_region(None, &options([2, 0, 0, 0], [5, 0, 0, 0])).unwrap();
        assert_eq!(shapes.domain.as_slice(), [7]);
        assert_eq!(shapes.region.origin.as_slice(), [2]);
    }

    #[test]
    fn regions_outside_the_domain_are_refused() {
        let e = exec_region(
            Some(smallvec::smallvec![4]),
            &options([2, 0, 0, 0], [3, 0, 0, 0]),
        );
        assert!(e.is_err());
        let e = exec_region(Some(smallvec::smallvec![4]), &options([0; 4], [2, 2, 0, 0]));
        assert!(e.is_err());
        assert!(exec_region(None, &LaunchOptions::default()).is_err());
    }
}
