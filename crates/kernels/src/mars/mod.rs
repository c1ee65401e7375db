//! The Mars (MapReduce on GPUs) workload of FlashAbacus §5.6: WordCount.

pub mod wordcount;
