//! The methods by non-zero (the paper's GlobalNZ, SharedNZ and LocalNZ, and SharedAtomic beyond
//! it): their cases ([`methods`]), their host plans (METIS partitions, scatter and reduction
//! arrays packed by LPT: [`plans`]) and the search for a partition that fits the shared memory
//! ([`search`]).

pub mod methods;
pub mod plans;
pub mod search;
