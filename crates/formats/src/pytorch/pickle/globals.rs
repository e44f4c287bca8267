//! What a `GLOBAL` may name (P4's list), and for any other name the error
//! saying what loading the file would import and call; the storage
//! classes a persistent id may name.

use crate::pytorch::PytorchErrorKind;
use crate::pytorch::dtype::{self, Dtype};

/// A storage class named in a persistent id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageClass {
    /// `torch.FloatStorage` and the others of the table.
    Typed(&'static Dtype),
    /// `torch.UntypedStorage`: bytes.
    Untyped,
}

impl StorageClass {
    /// Bytes per element.
    pub fn elem(self) -> u64 {
        match self {
            StorageClass::Typed(d) => d.size,
            StorageClass::Untyped => 1,
        }
    }

    /// The class's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            StorageClass::Typed(d) => d.storage.unwrap_or(d.torch),
            StorageClass::Untyped => "UntypedStorage",
        }
    }
}

/// What a `GLOBAL` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Global {
    /// `collections.OrderedDict`.
    OrderedDict,
    /// `collections.Counter`.
    Counter,
    /// `torch._utils._rebuild_tensor` (1), `_v2` (2), `_v3` (3).
    RebuildTensor(u8),
    /// `torch._utils._rebuild_parameter`.
    RebuildParameter,
    /// `torch._utils._rebuild_parameter_with_state`.
    RebuildParameterWithState,
    /// `torch._tensor._rebuild_from_type_v2`.
    RebuildFromType,
    /// `torch.Tensor`.
    TensorType,
    /// `torch.nn.parameter.Parameter`.
    ParameterType,
    /// A storage class.
    Storage(StorageClass),
    /// `torch.Size`.
    Size,
    /// `torch.<dtype>`.
    Dtype(&'static Dtype),
    /// `torch.device`.
    Device,
    /// `_codecs.encode`.
    Encode,
    /// `builtins.bytearray`.
    ByteArray,
    /// `builtins.set`.
    Set,
    /// `builtins.complex`.
    Complex,
}

impl Global {
    /// The accepted global `module.name`, or the error naming what loading would run.
    pub(super) fn of(module: &[u8], name: &[u8]) -> Result<Global, PytorchErrorKind> {
        let g = match (module, name) {
            (b"collections", b"OrderedDict") => Global::OrderedDict,
            (b"collections", b"Counter") => Global::Counter,
            (b"torch._utils", b"_rebuild_tensor") => Global::RebuildTensor(1),
            (b"torch._utils", b"_rebuild_tensor_v2") => Global::RebuildTensor(2),
            (b"torch._utils", b"_rebuild_tensor_v3") => Global::RebuildTensor(3),
            (b"torch._utils", b"_rebuild_parameter") => Global::RebuildParameter,
            (b"torch._utils", b"_rebuild_parameter_with_state") => Global::RebuildParameterWithState,
            (b"torch._tensor", b"_rebuild_from_type_v2") => Global::RebuildFromType,
            (b"torch", b"Tensor") => Global::TensorType,
            (b"torch.nn.parameter", b"Parameter") => Global::ParameterType,
            (b"torch" | b"torch.storage", b"UntypedStorage") => Global::Storage(StorageClass::Untyped),
            (b"torch", b"Size") => Global::Size,
            (b"torch", b"device") => Global::Device,
            (b"_codecs", b"encode") => Global::Encode,
            (b"builtins" | b"__builtin__", b"bytearray") => Global::ByteArray,
            (b"builtins" | b"__builtin__", b"set") => Global::Set,
            (b"builtins" | b"__builtin__", b"complex") => Global::Complex,
            (b"torch", n) if dtype::by_storage(n).is_some() => {
                Global::Storage(StorageClass::Typed(dtype::by_storage(n).unwrap_or(&dtype::DTYPES[0])))
            }
            (b"torch", n) if dtype::by_torch_name(n).is_some() => {
                Global::Dtype(dtype::by_torch_name(n).unwrap_or(&dtype::DTYPES[0]))
            }
            _ => {
                let (module, name) = (String::from_utf8_lossy(module), String::from_utf8_lossy(name));
                if module.starts_with("torch") && name.starts_with("_rebuild_") {
                    return Err(PytorchErrorKind::Checkpoint(format!(
                        "the pickle rebuilds a tensor with `{module}.{name}`: this label covers dense tensors only \
                         (quantized, sparse, meta, nested and subclass tensors are refused)"
                    )));
                }
                return Err(PytorchErrorKind::RefusedGlobal { module: module.into_owned(), name: name.into_owned() });
            }
        };
        Ok(g)
    }

    /// Its name, for messages.
    pub fn name(self) -> String {
        match self {
            Global::OrderedDict => "collections.OrderedDict".into(),
            Global::Counter => "collections.Counter".into(),
            Global::RebuildTensor(1) => "torch._utils._rebuild_tensor".into(),
            Global::RebuildTensor(v) => format!("torch._utils._rebuild_tensor_v{v}"),
            Global::RebuildParameter => "torch._utils._rebuild_parameter".into(),
            Global::RebuildParameterWithState => "torch._utils._rebuild_parameter_with_state".into(),
            Global::RebuildFromType => "torch._tensor._rebuild_from_type_v2".into(),
            Global::TensorType => "torch.Tensor".into(),
            Global::ParameterType => "torch.nn.parameter.Parameter".into(),
            Global::Storage(c) => format!("torch.{}", c.name()),
            Global::Size => "torch.Size".into(),
            Global::Dtype(d) => format!("torch.{}", d.torch),
            Global::Device => "torch.device".into(),
            Global::Encode => "_codecs.encode".into(),
            Global::ByteArray => "builtins.bytearray".into(),
            Global::Set => "builtins.set".into(),
            Global::Complex => "builtins.complex".into(),
        }
    }
}
