//! The tensors of a logical model as a view: each tensor info stays where
//! its shard's parse put it, and the model keeps, per tensor in canonical
//! order, only where that info is and its recomputed offset (24 bytes). A
//! model of a million tensors thus holds each info once.

use crate::gguf::parse::TensorInfo;
use crate::gguf::shard::Shard;

/// A tensor of the logical model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelTensor<'a> {
    /// The tensor info as parsed (in its shard's file).
    pub info: &'a TensorInfo,
    /// Index of the shard that holds its data.
    pub shard: usize,
    /// Its offset in the canonical layout (spec §2, recomputed_offset).
    pub offset: u64,
}

/// Where a tensor of the model is: its shard, its index in that shard's
/// tensor infos, and its recomputed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) shard: usize,
    pub(crate) index: usize,
    pub(crate) offset: u64,
}

impl Slot {
    /// The info this slot names. Slots are made from the shards they are
    /// read with, so it is always there.
    pub(crate) fn info<'a>(&self, shards: &'a [Shard]) -> Option<&'a TensorInfo> {
        shards.get(self.shard)?.file.tensors.get(self.index)
    }

    fn view<'a>(&self, shards: &'a [Shard]) -> Option<ModelTensor<'a>> {
        Some(ModelTensor { info: self.info(shards)?, shard: self.shard, offset: self.offset })
    }
}

/// The tensors of a model in canonical order (sorted by name bytes), as
/// [`Model::tensors`](crate::gguf::Model::tensors) gives them.
#[derive(Debug, Clone, Copy)]
pub struct Tensors<'a> {
    shards: &'a [Shard],
    slots: &'a [Slot],
}

impl<'a> Tensors<'a> {
    pub(crate) fn new(shards: &'a [Shard], slots: &'a [Slot]) -> Tensors<'a> {
        Tensors { shards, slots }
    }

    /// How many tensors.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when the model has none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Tensor `i` in canonical order.
    pub fn get(&self, i: usize) -> Option<ModelTensor<'a>> {
        self.slots.get(i)?.view(self.shards)
    }

    /// The tensors in canonical order.
    pub fn iter(&self) -> TensorIter<'a> {
        TensorIter { shards: self.shards, slots: self.slots.iter() }
    }
}

impl<'a> IntoIterator for Tensors<'a> {
    type Item = ModelTensor<'a>;
    type IntoIter = TensorIter<'a>;
    fn into_iter(self) -> TensorIter<'a> {
        self.iter()
    }
}

/// An iterator over a model's tensors, in canonical order.
#[derive(Debug, Clone)]
pub struct TensorIter<'a> {
    shards: &'a [Shard],
    slots: std::slice::Iter<'a, Slot>,
}

impl<'a> Iterator for TensorIter<'a> {
    type Item = ModelTensor<'a>;
    fn next(&mut self) -> Option<ModelTensor<'a>> {
        self.slots.next()?.view(self.shards)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl DoubleEndedIterator for TensorIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.slots.next_back()?.view(self.shards)
    }
}

impl ExactSizeIterator for TensorIter<'_> {}
