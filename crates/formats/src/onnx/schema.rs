//! The messages and fields of `onnx-ml.proto` (ONNX 1.22.0) that SPEC Part
//! VI reads (X4), as tables: the wire reader checks records against them
//! and the skeleton writer walks them in ascending field number. A field
//! number a message's table lacks is an error.
//!
//! `TensorProto` and `SparseTensorProto` have tables too (for the wire
//! checks), but are encoded by X3.2, not field by field.

/// A message of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum M {
    /// `ModelProto`.
    Model,
    /// `OperatorSetIdProto`.
    OpsetId,
    /// `StringStringEntryProto`.
    StrStr,
    /// `GraphProto`.
    Graph,
    /// `NodeProto`.
    Node,
    /// `AttributeProto`.
    Attribute,
    /// `ValueInfoProto`.
    ValueInfo,
    /// `TensorProto`.
    Tensor,
    /// `TensorProto.Segment` (refused wherever it is written).
    Segment,
    /// `SparseTensorProto`.
    Sparse,
    /// `TypeProto`.
    Type,
    /// `TypeProto.Tensor` and `TypeProto.SparseTensor` (the same fields).
    TypeTensor,
    /// `TypeProto.Sequence` and `TypeProto.Optional` (the same fields).
    TypeElem,
    /// `TypeProto.Map`.
    TypeMap,
    /// `TypeProto.Opaque`.
    TypeOpaque,
    /// `TensorShapeProto`.
    Shape,
    /// `TensorShapeProto.Dimension`.
    Dim,
    /// `TensorAnnotation`.
    Annotation,
    /// `TrainingInfoProto`.
    Training,
    /// `FunctionProto`.
    Function,
    /// `DeviceConfigurationProto`.
    DeviceConfig,
    /// `NodeDeviceConfigurationProto`.
    NodeDeviceConfig,
    /// `ShardingSpecProto`.
    Sharding,
    /// `IntIntListEntryProto`.
    IntIntList,
    /// `ShardedDimProto`.
    ShardedDim,
    /// `SimpleShardedDimProto`.
    SimpleShardedDim,
}

/// A field's type, which decides its wire type and its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `int32`: a varint in −2³¹ … 2³¹ − 1.
    Int32,
    /// `int64`.
    Int64,
    /// `uint64`.
    Uint64,
    /// An enum: an `int32` the listed values name.
    Enum(&'static [i64]),
    /// `float`: 4 bytes.
    Float,
    /// `double`: 8 bytes.
    Double,
    /// `string` or `bytes`.
    Bytes,
    /// A message.
    Msg(M),
}

impl Ty {
    /// Whether a repeated field of this type may be packed.
    pub fn is_number(self) -> bool {
        !matches!(self, Ty::Bytes | Ty::Msg(_))
    }
}

/// How a repeated message field is ordered in the skeleton.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// As written.
    Keep,
    /// By these string fields of each, compared in turn.
    By(&'static [u32]),
    /// Tensors by `name`.
    TensorName,
    /// Sparse tensors by `values.name`.
    SparseName,
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its number.
    pub num: u32,
    /// Its name, for field paths.
    pub name: &'static str,
    /// Its type.
    pub ty: Ty,
    /// Whether it is repeated.
    pub rep: bool,
    /// The `oneof` it belongs to (its name), if any.
    pub oneof: Option<&'static str>,
    /// The order of a repeated message field.
    pub order: Order,
}

const fn f(num: u32, name: &'static str, ty: Ty) -> Field {
    Field { num, name, ty, rep: false, oneof: None, order: Order::Keep }
}

const fn r(num: u32, name: &'static str, ty: Ty) -> Field {
    Field { num, name, ty, rep: true, oneof: None, order: Order::Keep }
}

const fn sorted(num: u32, name: &'static str, ty: Ty, order: Order) -> Field {
    Field { num, name, ty, rep: true, oneof: None, order }
}

const fn one(num: u32, name: &'static str, ty: Ty, group: &'static str) -> Field {
    Field { num, name, ty, rep: false, oneof: Some(group), order: Order::Keep }
}

use Ty::{Bytes, Double, Float, Int32, Int64, Msg, Uint64};

/// `AttributeProto.AttributeType`: 0 … 14.
const ATTRIBUTE_TYPES: &[i64] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
/// `TensorProto.DataLocation`: DEFAULT, EXTERNAL.
const DATA_LOCATIONS: &[i64] = &[0, 1];

const BY_KEY: Order = Order::By(&[1]);
const BY_NAME: Order = Order::By(&[1]);
const BY_DOMAIN: Order = Order::By(&[1]);
const BY_FUNCTION: Order = Order::By(&[10, 1, 13]);

static MODEL: &[Field] = &[
    f(1, "ir_version", Int64),
    f(2, "producer_name", Bytes),
    f(3, "producer_version", Bytes),
    f(4, "domain", Bytes),
    f(5, "model_version", Int64),
    f(6, "doc_string", Bytes),
    f(7, "graph", Msg(M::Graph)),
    sorted(8, "opset_import", Msg(M::OpsetId), BY_DOMAIN),
    sorted(14, "metadata_props", Msg(M::StrStr), BY_KEY),
    r(20, "training_info", Msg(M::Training)),
    sorted(25, "functions", Msg(M::Function), BY_FUNCTION),
    r(26, "configuration", Msg(M::DeviceConfig)),
];

static OPSET_ID: &[Field] = &[f(1, "domain", Bytes), f(2, "version", Int64)];

static STR_STR: &[Field] = &[f(1, "key", Bytes), f(2, "value", Bytes)];

static GRAPH: &[Field] = &[
    r(1, "node", Msg(M::Node)),
    f(2, "name", Bytes),
    sorted(5, "initializer", Msg(M::Tensor), Order::TensorName),
    f(10, "doc_string", Bytes),
    r(11, "input", Msg(M::ValueInfo)),
    r(12, "output", Msg(M::ValueInfo)),
    sorted(13, "value_info", Msg(M::ValueInfo), BY_NAME),
    r(14, "quantization_annotation", Msg(M::Annotation)),
    sorted(15, "sparse_initializer", Msg(M::Sparse), Order::SparseName),
    sorted(16, "metadata_props", Msg(M::StrStr), BY_KEY),
];

static NODE: &[Field] = &[
    r(1, "input", Bytes),
    r(2, "output", Bytes),
    f(3, "name", Bytes),
    f(4, "op_type", Bytes),
    sorted(5, "attribute", Msg(M::Attribute), BY_NAME),
    f(6, "doc_string", Bytes),
    f(7, "domain", Bytes),
    f(8, "overload", Bytes),
    sorted(9, "metadata_props", Msg(M::StrStr), BY_KEY),
    r(10, "device_configurations", Msg(M::NodeDeviceConfig)),
];

static ATTRIBUTE: &[Field] = &[
    f(1, "name", Bytes),
    f(2, "f", Float),
    f(3, "i", Int64),
    f(4, "s", Bytes),
    f(5, "t", Msg(M::Tensor)),
    f(6, "g", Msg(M::Graph)),
    r(7, "floats", Float),
    r(8, "ints", Int64),
    r(9, "strings", Bytes),
    r(10, "tensors", Msg(M::Tensor)),
    r(11, "graphs", Msg(M::Graph)),
    f(13, "doc_string", Bytes),
    f(14, "tp", Msg(M::Type)),
    r(15, "type_protos", Msg(M::Type)),
    f(20, "type", Ty::Enum(ATTRIBUTE_TYPES)),
    f(21, "ref_attr_name", Bytes),
    f(22, "sparse_tensor", Msg(M::Sparse)),
    r(23, "sparse_tensors", Msg(M::Sparse)),
];

static VALUE_INFO: &[Field] = &[
    f(1, "name", Bytes),
    f(2, "type", Msg(M::Type)),
    f(3, "doc_string", Bytes),
    sorted(4, "metadata_props", Msg(M::StrStr), BY_KEY),
];

/// `TensorProto`'s field numbers, for the tensor reader.
pub mod tensor {
    /// `dims`.
    pub const DIMS: u32 = 1;
    /// `data_type`.
    pub const DATA_TYPE: u32 = 2;
    /// `segment` (refused).
    pub const SEGMENT: u32 = 3;
    /// `float_data`.
    pub const FLOAT_DATA: u32 = 4;
    /// `int32_data`.
    pub const INT32_DATA: u32 = 5;
    /// `string_data`.
    pub const STRING_DATA: u32 = 6;
    /// `int64_data`.
    pub const INT64_DATA: u32 = 7;
    /// `name`.
    pub const NAME: u32 = 8;
    /// `raw_data`.
    pub const RAW_DATA: u32 = 9;
    /// `double_data`.
    pub const DOUBLE_DATA: u32 = 10;
    /// `uint64_data`.
    pub const UINT64_DATA: u32 = 11;
    /// `doc_string`.
    pub const DOC_STRING: u32 = 12;
    /// `external_data`.
    pub const EXTERNAL_DATA: u32 = 13;
    /// `data_location`.
    pub const DATA_LOCATION: u32 = 14;
    /// `metadata_props`.
    pub const METADATA_PROPS: u32 = 16;
}

static TENSOR: &[Field] = &[
    r(1, "dims", Int64),
    f(2, "data_type", Int32),
    f(3, "segment", Msg(M::Segment)),
    r(4, "float_data", Float),
    r(5, "int32_data", Int32),
    r(6, "string_data", Bytes),
    r(7, "int64_data", Int64),
    f(8, "name", Bytes),
    f(9, "raw_data", Bytes),
    r(10, "double_data", Double),
    r(11, "uint64_data", Uint64),
    f(12, "doc_string", Bytes),
    r(13, "external_data", Msg(M::StrStr)),
    f(14, "data_location", Ty::Enum(DATA_LOCATIONS)),
    sorted(16, "metadata_props", Msg(M::StrStr), BY_KEY),
];

static SEGMENT: &[Field] = &[f(1, "begin", Int64), f(2, "end", Int64)];

static SPARSE: &[Field] = &[f(1, "values", Msg(M::Tensor)), f(2, "indices", Msg(M::Tensor)), r(3, "dims", Int64)];

static TYPE: &[Field] = &[
    one(1, "tensor_type", Msg(M::TypeTensor), "value"),
    one(4, "sequence_type", Msg(M::TypeElem), "value"),
    one(5, "map_type", Msg(M::TypeMap), "value"),
    f(6, "denotation", Bytes),
    one(7, "opaque_type", Msg(M::TypeOpaque), "value"),
    one(8, "sparse_tensor_type", Msg(M::TypeTensor), "value"),
    one(9, "optional_type", Msg(M::TypeElem), "value"),
];

static TYPE_TENSOR: &[Field] = &[f(1, "elem_type", Int32), f(2, "shape", Msg(M::Shape))];
static TYPE_ELEM: &[Field] = &[f(1, "elem_type", Msg(M::Type))];
static TYPE_MAP: &[Field] = &[f(1, "key_type", Int32), f(2, "value_type", Msg(M::Type))];
static TYPE_OPAQUE: &[Field] = &[f(1, "domain", Bytes), f(2, "name", Bytes)];
static SHAPE: &[Field] = &[r(1, "dim", Msg(M::Dim))];
static DIM: &[Field] =
    &[one(1, "dim_value", Int64, "value"), one(2, "dim_param", Bytes, "value"), f(3, "denotation", Bytes)];
static ANNOTATION: &[Field] = &[f(1, "tensor_name", Bytes), r(2, "quant_parameter_tensor_names", Msg(M::StrStr))];
static TRAINING: &[Field] = &[
    f(1, "initialization", Msg(M::Graph)),
    f(2, "algorithm", Msg(M::Graph)),
    r(3, "initialization_binding", Msg(M::StrStr)),
    r(4, "update_binding", Msg(M::StrStr)),
];
static FUNCTION: &[Field] = &[
    f(1, "name", Bytes),
    r(4, "input", Bytes),
    r(5, "output", Bytes),
    r(6, "attribute", Bytes),
    r(7, "node", Msg(M::Node)),
    f(8, "doc_string", Bytes),
    sorted(9, "opset_import", Msg(M::OpsetId), BY_DOMAIN),
    f(10, "domain", Bytes),
    sorted(11, "attribute_proto", Msg(M::Attribute), BY_NAME),
    sorted(12, "value_info", Msg(M::ValueInfo), BY_NAME),
    f(13, "overload", Bytes),
    sorted(14, "metadata_props", Msg(M::StrStr), BY_KEY),
];
static DEVICE_CONFIG: &[Field] = &[f(1, "name", Bytes), f(2, "num_devices", Int32), r(3, "device", Bytes)];
static NODE_DEVICE_CONFIG: &[Field] =
    &[f(1, "configuration_id", Bytes), r(2, "sharding_spec", Msg(M::Sharding)), f(3, "pipeline_stage", Int32)];
static SHARDING: &[Field] = &[
    f(1, "tensor_name", Bytes),
    r(2, "device", Int64),
    r(3, "index_to_device_group_map", Msg(M::IntIntList)),
    r(4, "sharded_dim", Msg(M::ShardedDim)),
];
static INT_INT_LIST: &[Field] = &[f(1, "key", Int64), r(2, "value", Int64)];
static SHARDED_DIM: &[Field] = &[f(1, "axis", Int64), r(2, "simple_sharding", Msg(M::SimpleShardedDim))];
static SIMPLE_SHARDED_DIM: &[Field] =
    &[one(1, "dim_value", Int64, "dim"), one(2, "dim_param", Bytes, "dim"), f(3, "num_shards", Int64)];

impl M {
    /// The message's fields, in ascending number.
    pub fn fields(self) -> &'static [Field] {
        match self {
            M::Model => MODEL,
            M::OpsetId => OPSET_ID,
            M::StrStr => STR_STR,
            M::Graph => GRAPH,
            M::Node => NODE,
            M::Attribute => ATTRIBUTE,
            M::ValueInfo => VALUE_INFO,
            M::Tensor => TENSOR,
            M::Segment => SEGMENT,
            M::Sparse => SPARSE,
            M::Type => TYPE,
            M::TypeTensor => TYPE_TENSOR,
            M::TypeElem => TYPE_ELEM,
            M::TypeMap => TYPE_MAP,
            M::TypeOpaque => TYPE_OPAQUE,
            M::Shape => SHAPE,
            M::Dim => DIM,
            M::Annotation => ANNOTATION,
            M::Training => TRAINING,
            M::Function => FUNCTION,
            M::DeviceConfig => DEVICE_CONFIG,
            M::NodeDeviceConfig => NODE_DEVICE_CONFIG,
            M::Sharding => SHARDING,
            M::IntIntList => INT_INT_LIST,
            M::ShardedDim => SHARDED_DIM,
            M::SimpleShardedDim => SIMPLE_SHARDED_DIM,
        }
    }

    /// The message's name in the schema.
    pub fn name(self) -> &'static str {
        match self {
            M::Model => "ModelProto",
            M::OpsetId => "OperatorSetIdProto",
            M::StrStr => "StringStringEntryProto",
            M::Graph => "GraphProto",
            M::Node => "NodeProto",
            M::Attribute => "AttributeProto",
            M::ValueInfo => "ValueInfoProto",
            M::Tensor => "TensorProto",
            M::Segment => "TensorProto.Segment",
            M::Sparse => "SparseTensorProto",
            M::Type => "TypeProto",
            M::TypeTensor => "TypeProto.Tensor",
            M::TypeElem => "TypeProto.Sequence",
            M::TypeMap => "TypeProto.Map",
            M::TypeOpaque => "TypeProto.Opaque",
            M::Shape => "TensorShapeProto",
            M::Dim => "TensorShapeProto.Dimension",
            M::Annotation => "TensorAnnotation",
            M::Training => "TrainingInfoProto",
            M::Function => "FunctionProto",
            M::DeviceConfig => "DeviceConfigurationProto",
            M::NodeDeviceConfig => "NodeDeviceConfigurationProto",
            M::Sharding => "ShardingSpecProto",
            M::IntIntList => "IntIntListEntryProto",
            M::ShardedDim => "ShardedDimProto",
            M::SimpleShardedDim => "SimpleShardedDimProto",
        }
    }

    /// The field numbered `num`, with its index in [`M::fields`].
    pub fn field(self, num: u32) -> Option<(usize, &'static Field)> {
        self.fields().iter().enumerate().find(|(_, f)| f.num == num)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_ascend_and_sort_keys_are_string_fields() {
        let all = [
            M::Model,
            M::OpsetId,
            M::StrStr,
            M::Graph,
            M::Node,
            M::Attribute,
            M::ValueInfo,
            M::Tensor,
            M::Segment,
            M::Sparse,
            M::Type,
            M::TypeTensor,
            M::TypeElem,
            M::TypeMap,
            M::TypeOpaque,
            M::Shape,
            M::Dim,
            M::Annotation,
            M::Training,
            M::Function,
            M::DeviceConfig,
            M::NodeDeviceConfig,
            M::Sharding,
            M::IntIntList,
            M::ShardedDim,
            M::SimpleShardedDim,
        ];
        for m in all {
            let nums: Vec<u32> = m.fields().iter().map(|f| f.num).collect();
            assert!(nums.windows(2).all(|w| w[0] < w[1]), "{}", m.name());
            for fl in m.fields() {
                if let (Order::By(keys), Ty::Msg(inner)) = (fl.order, fl.ty) {
                    for k in keys {
                        assert_eq!(inner.field(*k).map(|(_, kf)| kf.ty), Some(Ty::Bytes), "{}.{}", m.name(), fl.name);
                    }
                }
            }
        }
    }
}
