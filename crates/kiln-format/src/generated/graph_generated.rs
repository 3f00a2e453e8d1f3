pub use root::*;

const _: () = ::planus::check_version_compatibility("planus-1.3.0");

/// The root namespace
///
/// Generated from these locations:
/// * File `schemas/graph.fbs`
#[no_implicit_prelude]
#[allow(clippy::needless_lifetimes)]
mod root {
    /// The namespace `kiln`
    ///
    /// Generated from these locations:
    /// * File `schemas/graph.fbs`
    pub mod kiln {
        /// The namespace `kiln.fb`
        ///
        /// Generated from these locations:
        /// * File `schemas/graph.fbs`
        pub mod fb {
            /// The namespace `kiln.fb.graph`
            ///
            /// Generated from these locations:
            /// * File `schemas/graph.fbs`
            pub mod graph {
                ///  Element type of a tensor or compute type of a node; values equal `DataType::code()`.
                ///
                /// Generated from these locations:
                /// * Enum `DataType` in the file `schemas/graph.fbs:9`
                #[derive(
                    Copy,
                    Clone,
                    Debug,
                    PartialEq,
                    Eq,
                    PartialOrd,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                #[repr(u8)]
                pub enum DataType {
                    /// The variant `F32` in the enum `DataType`
                    F32 = 0,

                    /// The variant `F16` in the enum `DataType`
                    F16 = 1,

                    /// The variant `Bf16` in the enum `DataType`
                    Bf16 = 2,

                    /// The variant `F64` in the enum `DataType`
                    F64 = 3,

                    /// The variant `Boolean` in the enum `DataType`
                    Boolean = 4,

                    /// The variant `I8` in the enum `DataType`
                    I8 = 5,

                    /// The variant `I32` in the enum `DataType`
                    I32 = 6,

                    /// The variant `Fp8E4m3` in the enum `DataType`
                    Fp8E4m3 = 7,

                    /// The variant `Fp8E5m2` in the enum `DataType`
                    Fp8E5m2 = 8,
                }

                impl DataType {
                    /// Array containing all valid variants of DataType
                    pub const ENUM_VALUES: [Self; 9] = [
                        Self::F32,
                        Self::F16,
                        Self::Bf16,
                        Self::F64,
                        Self::Boolean,
                        Self::I8,
                        Self::I32,
                        Self::Fp8E4m3,
                        Self::Fp8E5m2,
                    ];
                }

                impl ::core::convert::TryFrom<u8> for DataType {
                    type Error = ::planus::errors::UnknownEnumTagKind;
                    #[inline]
                    fn try_from(
                        value: u8,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTagKind>
                    {
                        #[allow(clippy::match_single_binding)]
                        match value {
                            0 => ::core::result::Result::Ok(DataType::F32),
                            1 => ::core::result::Result::Ok(DataType::F16),
                            2 => ::core::result::Result::Ok(DataType::Bf16),
                            3 => ::core::result::Result::Ok(DataType::F64),
                            4 => ::core::result::Result::Ok(DataType::Boolean),
                            5 => ::core::result::Result::Ok(DataType::I8),
                            6 => ::core::result::Result::Ok(DataType::I32),
                            7 => ::core::result::Result::Ok(DataType::Fp8E4m3),
                            8 => ::core::result::Result::Ok(DataType::Fp8E5m2),

                            _ => {
                                ::core::result::Result::Err(::planus::errors::UnknownEnumTagKind {
                                    tag: value as i128,
                                })
                            }
                        }
                    }
                }

                impl ::core::convert::From<DataType> for u8 {
                    #[inline]
                    fn from(value: DataType) -> Self {
                        value as u8
                    }
                }

                /// # Safety
                /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
                unsafe impl ::planus::Primitive for DataType {
                    const ALIGNMENT: usize = 1;
                    const SIZE: usize = 1;
                }

                impl ::planus::WriteAsPrimitive<DataType> for DataType {
                    #[inline]
                    fn write<const N: usize>(
                        &self,
                        cursor: ::planus::Cursor<'_, N>,
                        buffer_position: u32,
                    ) {
                        (*self as u8).write(cursor, buffer_position);
                    }
                }

                impl ::planus::WriteAs<DataType> for DataType {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> DataType {
                        *self
                    }
                }

                impl ::planus::WriteAsDefault<DataType, DataType> for DataType {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                        default: &DataType,
                    ) -> ::core::option::Option<DataType> {
                        if self == default {
                            ::core::option::Option::None
                        } else {
                            ::core::option::Option::Some(*self)
                        }
                    }
                }

                impl ::planus::WriteAsOptional<DataType> for DataType {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<DataType> {
                        ::core::option::Option::Some(*self)
                    }
                }

                impl<'buf> ::planus::TableRead<'buf> for DataType {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        let n: u8 = ::planus::TableRead::from_buffer(buffer, offset)?;
                        ::core::result::Result::Ok(::core::convert::TryInto::try_into(n)?)
                    }
                }

                impl<'buf> ::planus::VectorReadInner<'buf> for DataType {
                    type Error = ::planus::errors::UnknownEnumTag;
                    const STRIDE: usize = 1;
                    #[inline]
                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTag>
                    {
                        let value = unsafe { *buffer.buffer.get_unchecked(offset) };
                        let value: ::core::result::Result<Self, _> =
                            ::core::convert::TryInto::try_into(value);
                        value.map_err(|error_kind| {
                            error_kind.with_error_location(
                                "DataType",
                                "VectorRead::from_buffer",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<DataType> for DataType {
                    const STRIDE: usize = 1;

                    type Value = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> Self {
                        *self
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[Self],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 1];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - i as u32,
                            );
                        }
                    }
                }

                ///  Pointwise mode; values equal `PointwiseMode::code()`.
                ///
                /// Generated from these locations:
                /// * Enum `PointwiseMode` in the file `schemas/graph.fbs:23`
                #[derive(
                    Copy,
                    Clone,
                    Debug,
                    PartialEq,
                    Eq,
                    PartialOrd,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                #[repr(u8)]
                pub enum PointwiseMode {
                    /// The variant `Add` in the enum `PointwiseMode`
                    Add = 0,

                    /// The variant `Sub` in the enum `PointwiseMode`
                    Sub = 1,

                    /// The variant `Mul` in the enum `PointwiseMode`
                    Mul = 2,

                    /// The variant `Div` in the enum `PointwiseMode`
                    Div = 3,

                    /// The variant `Max` in the enum `PointwiseMode`
                    Max = 4,

                    /// The variant `Min` in the enum `PointwiseMode`
                    Min = 5,

                    /// The variant `Pow` in the enum `PointwiseMode`
                    Pow = 6,

                    /// The variant `CmpEq` in the enum `PointwiseMode`
                    CmpEq = 7,

                    /// The variant `CmpNe` in the enum `PointwiseMode`
                    CmpNe = 8,

                    /// The variant `CmpLt` in the enum `PointwiseMode`
                    CmpLt = 9,

                    /// The variant `CmpLe` in the enum `PointwiseMode`
                    CmpLe = 10,

                    /// The variant `CmpGt` in the enum `PointwiseMode`
                    CmpGt = 11,

                    /// The variant `CmpGe` in the enum `PointwiseMode`
                    CmpGe = 12,

                    /// The variant `Identity` in the enum `PointwiseMode`
                    Identity = 13,

                    /// The variant `Relu` in the enum `PointwiseMode`
                    Relu = 14,

                    /// The variant `Sigmoid` in the enum `PointwiseMode`
                    Sigmoid = 15,

                    /// The variant `Tanh` in the enum `PointwiseMode`
                    Tanh = 16,

                    /// The variant `Gelu` in the enum `PointwiseMode`
                    Gelu = 17,

                    /// The variant `GeluApproxTanh` in the enum `PointwiseMode`
                    GeluApproxTanh = 18,

                    /// The variant `Swish` in the enum `PointwiseMode`
                    Swish = 19,

                    /// The variant `Elu` in the enum `PointwiseMode`
                    Elu = 20,

                    /// The variant `Softplus` in the enum `PointwiseMode`
                    Softplus = 21,

                    /// The variant `Exp` in the enum `PointwiseMode`
                    Exp = 22,

                    /// The variant `Log` in the enum `PointwiseMode`
                    Log = 23,

                    /// The variant `Abs` in the enum `PointwiseMode`
                    Abs = 24,

                    /// The variant `Neg` in the enum `PointwiseMode`
                    Neg = 25,

                    /// The variant `Sqrt` in the enum `PointwiseMode`
                    Sqrt = 26,

                    /// The variant `Rsqrt` in the enum `PointwiseMode`
                    Rsqrt = 27,

                    /// The variant `Reciprocal` in the enum `PointwiseMode`
                    Reciprocal = 28,

                    /// The variant `AddSquare` in the enum `PointwiseMode`
                    AddSquare = 29,

                    /// The variant `Mod` in the enum `PointwiseMode`
                    Mod = 30,

                    /// The variant `Atan2` in the enum `PointwiseMode`
                    Atan2 = 31,

                    /// The variant `Ceil` in the enum `PointwiseMode`
                    Ceil = 32,

                    /// The variant `Floor` in the enum `PointwiseMode`
                    Floor = 33,

                    /// The variant `Sin` in the enum `PointwiseMode`
                    Sin = 34,

                    /// The variant `Cos` in the enum `PointwiseMode`
                    Cos = 35,

                    /// The variant `Tan` in the enum `PointwiseMode`
                    Tan = 36,

                    /// The variant `Erf` in the enum `PointwiseMode`
                    Erf = 37,

                    /// The variant `ReluBwd` in the enum `PointwiseMode`
                    ReluBwd = 38,

                    /// The variant `TanhBwd` in the enum `PointwiseMode`
                    TanhBwd = 39,

                    /// The variant `SigmoidBwd` in the enum `PointwiseMode`
                    SigmoidBwd = 40,

                    /// The variant `EluBwd` in the enum `PointwiseMode`
                    EluBwd = 41,

                    /// The variant `GeluBwd` in the enum `PointwiseMode`
                    GeluBwd = 42,

                    /// The variant `GeluApproxTanhBwd` in the enum `PointwiseMode`
                    GeluApproxTanhBwd = 43,

                    /// The variant `SoftplusBwd` in the enum `PointwiseMode`
                    SoftplusBwd = 44,

                    /// The variant `SwishBwd` in the enum `PointwiseMode`
                    SwishBwd = 45,

                    /// The variant `LogicalAnd` in the enum `PointwiseMode`
                    LogicalAnd = 46,

                    /// The variant `LogicalOr` in the enum `PointwiseMode`
                    LogicalOr = 47,

                    /// The variant `LogicalNot` in the enum `PointwiseMode`
                    LogicalNot = 48,

                    /// The variant `GenIndex` in the enum `PointwiseMode`
                    GenIndex = 49,

                    /// The variant `BinarySelect` in the enum `PointwiseMode`
                    BinarySelect = 50,
                }

                impl PointwiseMode {
                    /// Array containing all valid variants of PointwiseMode
                    pub const ENUM_VALUES: [Self; 51] = [
                        Self::Add,
                        Self::Sub,
                        Self::Mul,
                        Self::Div,
                        Self::Max,
                        Self::Min,
                        Self::Pow,
                        Self::CmpEq,
                        Self::CmpNe,
                        Self::CmpLt,
                        Self::CmpLe,
                        Self::CmpGt,
                        Self::CmpGe,
                        Self::Identity,
                        Self::Relu,
                        Self::Sigmoid,
                        Self::Tanh,
                        Self::Gelu,
                        Self::GeluApproxTanh,
                        Self::Swish,
                        Self::Elu,
                        Self::Softplus,
                        Self::Exp,
                        Self::Log,
                        Self::Abs,
                        Self::Neg,
                        Self::Sqrt,
                        Self::Rsqrt,
                        Self::Reciprocal,
                        Self::AddSquare,
                        Self::Mod,
                        Self::Atan2,
                        Self::Ceil,
                        Self::Floor,
                        Self::Sin,
                        Self::Cos,
                        Self::Tan,
                        Self::Erf,
                        Self::ReluBwd,
                        Self::TanhBwd,
                        Self::SigmoidBwd,
                        Self::EluBwd,
                        Self::GeluBwd,
                        Self::GeluApproxTanhBwd,
                        Self::SoftplusBwd,
                        Self::SwishBwd,
                        Self::LogicalAnd,
                        Self::LogicalOr,
                        Self::LogicalNot,
                        Self::GenIndex,
                        Self::BinarySelect,
                    ];
                }

                impl ::core::convert::TryFrom<u8> for PointwiseMode {
                    type Error = ::planus::errors::UnknownEnumTagKind;
                    #[inline]
                    fn try_from(
                        value: u8,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTagKind>
                    {
                        #[allow(clippy::match_single_binding)]
                        match value {
                            0 => ::core::result::Result::Ok(PointwiseMode::Add),
                            1 => ::core::result::Result::Ok(PointwiseMode::Sub),
                            2 => ::core::result::Result::Ok(PointwiseMode::Mul),
                            3 => ::core::result::Result::Ok(PointwiseMode::Div),
                            4 => ::core::result::Result::Ok(PointwiseMode::Max),
                            5 => ::core::result::Result::Ok(PointwiseMode::Min),
                            6 => ::core::result::Result::Ok(PointwiseMode::Pow),
                            7 => ::core::result::Result::Ok(PointwiseMode::CmpEq),
                            8 => ::core::result::Result::Ok(PointwiseMode::CmpNe),
                            9 => ::core::result::Result::Ok(PointwiseMode::CmpLt),
                            10 => ::core::result::Result::Ok(PointwiseMode::CmpLe),
                            11 => ::core::result::Result::Ok(PointwiseMode::CmpGt),
                            12 => ::core::result::Result::Ok(PointwiseMode::CmpGe),
                            13 => ::core::result::Result::Ok(PointwiseMode::Identity),
                            14 => ::core::result::Result::Ok(PointwiseMode::Relu),
                            15 => ::core::result::Result::Ok(PointwiseMode::Sigmoid),
                            16 => ::core::result::Result::Ok(PointwiseMode::Tanh),
                            17 => ::core::result::Result::Ok(PointwiseMode::Gelu),
                            18 => ::core::result::Result::Ok(PointwiseMode::GeluApproxTanh),
                            19 => ::core::result::Result::Ok(PointwiseMode::Swish),
                            20 => ::core::result::Result::Ok(PointwiseMode::Elu),
                            21 => ::core::result::Result::Ok(PointwiseMode::Softplus),
                            22 => ::core::result::Result::Ok(PointwiseMode::Exp),
                            23 => ::core::result::Result::Ok(PointwiseMode::Log),
                            24 => ::core::result::Result::Ok(PointwiseMode::Abs),
                            25 => ::core::result::Result::Ok(PointwiseMode::Neg),
                            26 => ::core::result::Result::Ok(PointwiseMode::Sqrt),
                            27 => ::core::result::Result::Ok(PointwiseMode::Rsqrt),
                            28 => ::core::result::Result::Ok(PointwiseMode::Reciprocal),
                            29 => ::core::result::Result::Ok(PointwiseMode::AddSquare),
                            30 => ::core::result::Result::Ok(PointwiseMode::Mod),
                            31 => ::core::result::Result::Ok(PointwiseMode::Atan2),
                            32 => ::core::result::Result::Ok(PointwiseMode::Ceil),
                            33 => ::core::result::Result::Ok(PointwiseMode::Floor),
                            34 => ::core::result::Result::Ok(PointwiseMode::Sin),
                            35 => ::core::result::Result::Ok(PointwiseMode::Cos),
                            36 => ::core::result::Result::Ok(PointwiseMode::Tan),
                            37 => ::core::result::Result::Ok(PointwiseMode::Erf),
                            38 => ::core::result::Result::Ok(PointwiseMode::ReluBwd),
                            39 => ::core::result::Result::Ok(PointwiseMode::TanhBwd),
                            40 => ::core::result::Result::Ok(PointwiseMode::SigmoidBwd),
                            41 => ::core::result::Result::Ok(PointwiseMode::EluBwd),
                            42 => ::core::result::Result::Ok(PointwiseMode::GeluBwd),
                            43 => ::core::result::Result::Ok(PointwiseMode::GeluApproxTanhBwd),
                            44 => ::core::result::Result::Ok(PointwiseMode::SoftplusBwd),
                            45 => ::core::result::Result::Ok(PointwiseMode::SwishBwd),
                            46 => ::core::result::Result::Ok(PointwiseMode::LogicalAnd),
                            47 => ::core::result::Result::Ok(PointwiseMode::LogicalOr),
                            48 => ::core::result::Result::Ok(PointwiseMode::LogicalNot),
                            49 => ::core::result::Result::Ok(PointwiseMode::GenIndex),
                            50 => ::core::result::Result::Ok(PointwiseMode::BinarySelect),

                            _ => {
                                ::core::result::Result::Err(::planus::errors::UnknownEnumTagKind {
                                    tag: value as i128,
                                })
                            }
                        }
                    }
                }

                impl ::core::convert::From<PointwiseMode> for u8 {
                    #[inline]
                    fn from(value: PointwiseMode) -> Self {
                        value as u8
                    }
                }

                /// # Safety
                /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
                unsafe impl ::planus::Primitive for PointwiseMode {
                    const ALIGNMENT: usize = 1;
                    const SIZE: usize = 1;
                }

                impl ::planus::WriteAsPrimitive<PointwiseMode> for PointwiseMode {
                    #[inline]
                    fn write<const N: usize>(
                        &self,
                        cursor: ::planus::Cursor<'_, N>,
                        buffer_position: u32,
                    ) {
                        (*self as u8).write(cursor, buffer_position);
                    }
                }

                impl ::planus::WriteAs<PointwiseMode> for PointwiseMode {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> PointwiseMode {
                        *self
                    }
                }

                impl ::planus::WriteAsDefault<PointwiseMode, PointwiseMode> for PointwiseMode {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                        default: &PointwiseMode,
                    ) -> ::core::option::Option<PointwiseMode> {
                        if self == default {
                            ::core::option::Option::None
                        } else {
                            ::core::option::Option::Some(*self)
                        }
                    }
                }

                impl ::planus::WriteAsOptional<PointwiseMode> for PointwiseMode {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<PointwiseMode> {
                        ::core::option::Option::Some(*self)
                    }
                }

                impl<'buf> ::planus::TableRead<'buf> for PointwiseMode {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        let n: u8 = ::planus::TableRead::from_buffer(buffer, offset)?;
                        ::core::result::Result::Ok(::core::convert::TryInto::try_into(n)?)
                    }
                }

                impl<'buf> ::planus::VectorReadInner<'buf> for PointwiseMode {
                    type Error = ::planus::errors::UnknownEnumTag;
                    const STRIDE: usize = 1;
                    #[inline]
                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTag>
                    {
                        let value = unsafe { *buffer.buffer.get_unchecked(offset) };
                        let value: ::core::result::Result<Self, _> =
                            ::core::convert::TryInto::try_into(value);
                        value.map_err(|error_kind| {
                            error_kind.with_error_location(
                                "PointwiseMode",
                                "VectorRead::from_buffer",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<PointwiseMode> for PointwiseMode {
                    const STRIDE: usize = 1;

                    type Value = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> Self {
                        *self
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[Self],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 1];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - i as u32,
                            );
                        }
                    }
                }

                ///  Convolution direction.
                ///
                /// Generated from these locations:
                /// * Enum `ConvDirection` in the file `schemas/graph.fbs:79`
                #[derive(
                    Copy,
                    Clone,
                    Debug,
                    PartialEq,
                    Eq,
                    PartialOrd,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                #[repr(u8)]
                pub enum ConvDirection {
                    /// The variant `Fprop` in the enum `ConvDirection`
                    Fprop = 0,

                    /// The variant `Dgrad` in the enum `ConvDirection`
                    Dgrad = 1,

                    /// The variant `Wgrad` in the enum `ConvDirection`
                    Wgrad = 2,
                }

                impl ConvDirection {
                    /// Array containing all valid variants of ConvDirection
                    pub const ENUM_VALUES: [Self; 3] = [Self::Fprop, Self::Dgrad, Self::Wgrad];
                }

                impl ::core::convert::TryFrom<u8> for ConvDirection {
                    type Error = ::planus::errors::UnknownEnumTagKind;
                    #[inline]
                    fn try_from(
                        value: u8,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTagKind>
                    {
                        #[allow(clippy::match_single_binding)]
                        match value {
                            0 => ::core::result::Result::Ok(ConvDirection::Fprop),
                            1 => ::core::result::Result::Ok(ConvDirection::Dgrad),
                            2 => ::core::result::Result::Ok(ConvDirection::Wgrad),

                            _ => {
                                ::core::result::Result::Err(::planus::errors::UnknownEnumTagKind {
                                    tag: value as i128,
                                })
                            }
                        }
                    }
                }

                impl ::core::convert::From<ConvDirection> for u8 {
                    #[inline]
                    fn from(value: ConvDirection) -> Self {
                        value as u8
                    }
                }

                /// # Safety
                /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
                unsafe impl ::planus::Primitive for ConvDirection {
                    const ALIGNMENT: usize = 1;
                    const SIZE: usize = 1;
                }

                impl ::planus::WriteAsPrimitive<ConvDirection> for ConvDirection {
                    #[inline]
                    fn write<const N: usize>(
                        &self,
                        cursor: ::planus::Cursor<'_, N>,
                        buffer_position: u32,
                    ) {
                        (*self as u8).write(cursor, buffer_position);
                    }
                }

                impl ::planus::WriteAs<ConvDirection> for ConvDirection {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> ConvDirection {
                        *self
                    }
                }

                impl ::planus::WriteAsDefault<ConvDirection, ConvDirection> for ConvDirection {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                        default: &ConvDirection,
                    ) -> ::core::option::Option<ConvDirection> {
                        if self == default {
                            ::core::option::Option::None
                        } else {
                            ::core::option::Option::Some(*self)
                        }
                    }
                }

                impl ::planus::WriteAsOptional<ConvDirection> for ConvDirection {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<ConvDirection> {
                        ::core::option::Option::Some(*self)
                    }
                }

                impl<'buf> ::planus::TableRead<'buf> for ConvDirection {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        let n: u8 = ::planus::TableRead::from_buffer(buffer, offset)?;
                        ::core::result::Result::Ok(::core::convert::TryInto::try_into(n)?)
                    }
                }

                impl<'buf> ::planus::VectorReadInner<'buf> for ConvDirection {
                    type Error = ::planus::errors::UnknownEnumTag;
                    const STRIDE: usize = 1;
                    #[inline]
                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTag>
                    {
                        let value = unsafe { *buffer.buffer.get_unchecked(offset) };
                        let value: ::core::result::Result<Self, _> =
                            ::core::convert::TryInto::try_into(value);
                        value.map_err(|error_kind| {
                            error_kind.with_error_location(
                                "ConvDirection",
                                "VectorRead::from_buffer",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<ConvDirection> for ConvDirection {
                    const STRIDE: usize = 1;

                    type Value = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> Self {
                        *self
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[Self],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 1];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - i as u32,
                            );
                        }
                    }
                }

                ///  Reduction mode; values equal `ReductionMode::code()`.
                ///
                /// Generated from these locations:
                /// * Enum `ReductionMode` in the file `schemas/graph.fbs:86`
                #[derive(
                    Copy,
                    Clone,
                    Debug,
                    PartialEq,
                    Eq,
                    PartialOrd,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                #[repr(u8)]
                pub enum ReductionMode {
                    /// The variant `Sum` in the enum `ReductionMode`
                    Sum = 0,

                    /// The variant `Mean` in the enum `ReductionMode`
                    Mean = 1,

                    /// The variant `Max` in the enum `ReductionMode`
                    Max = 2,

                    /// The variant `Min` in the enum `ReductionMode`
                    Min = 3,

                    /// The variant `Amax` in the enum `ReductionMode`
                    Amax = 4,

                    /// The variant `Norm1` in the enum `ReductionMode`
                    Norm1 = 5,

                    /// The variant `Norm2` in the enum `ReductionMode`
                    Norm2 = 6,
                }

                impl ReductionMode {
                    /// Array containing all valid variants of ReductionMode
                    pub const ENUM_VALUES: [Self; 7] = [
                        Self::Sum,
                        Self::Mean,
                        Self::Max,
                        Self::Min,
                        Self::Amax,
                        Self::Norm1,
                        Self::Norm2,
                    ];
                }

                impl ::core::convert::TryFrom<u8> for ReductionMode {
                    type Error = ::planus::errors::UnknownEnumTagKind;
                    #[inline]
                    fn try_from(
                        value: u8,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTagKind>
                    {
                        #[allow(clippy::match_single_binding)]
                        match value {
                            0 => ::core::result::Result::Ok(ReductionMode::Sum),
                            1 => ::core::result::Result::Ok(ReductionMode::Mean),
                            2 => ::core::result::Result::Ok(ReductionMode::Max),
                            3 => ::core::result::Result::Ok(ReductionMode::Min),
                            4 => ::core::result::Result::Ok(ReductionMode::Amax),
                            5 => ::core::result::Result::Ok(ReductionMode::Norm1),
                            6 => ::core::result::Result::Ok(ReductionMode::Norm2),

                            _ => {
                                ::core::result::Result::Err(::planus::errors::UnknownEnumTagKind {
                                    tag: value as i128,
                                })
                            }
                        }
                    }
                }

                impl ::core::convert::From<ReductionMode> for u8 {
                    #[inline]
                    fn from(value: ReductionMode) -> Self {
                        value as u8
                    }
                }

                /// # Safety
                /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
                unsafe impl ::planus::Primitive for ReductionMode {
                    const ALIGNMENT: usize = 1;
                    const SIZE: usize = 1;
                }

                impl ::planus::WriteAsPrimitive<ReductionMode> for ReductionMode {
                    #[inline]
                    fn write<const N: usize>(
                        &self,
                        cursor: ::planus::Cursor<'_, N>,
                        buffer_position: u32,
                    ) {
                        (*self as u8).write(cursor, buffer_position);
                    }
                }

                impl ::planus::WriteAs<ReductionMode> for ReductionMode {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> ReductionMode {
                        *self
                    }
                }

                impl ::planus::WriteAsDefault<ReductionMode, ReductionMode> for ReductionMode {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                        default: &ReductionMode,
                    ) -> ::core::option::Option<ReductionMode> {
                        if self == default {
                            ::core::option::Option::None
                        } else {
                            ::core::option::Option::Some(*self)
                        }
                    }
                }

                impl ::planus::WriteAsOptional<ReductionMode> for ReductionMode {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<ReductionMode> {
                        ::core::option::Option::Some(*self)
                    }
                }

                impl<'buf> ::planus::TableRead<'buf> for ReductionMode {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        let n: u8 = ::planus::TableRead::from_buffer(buffer, offset)?;
                        ::core::result::Result::Ok(::core::convert::TryInto::try_into(n)?)
                    }
                }

                impl<'buf> ::planus::VectorReadInner<'buf> for ReductionMode {
                    type Error = ::planus::errors::UnknownEnumTag;
                    const STRIDE: usize = 1;
                    #[inline]
                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTag>
                    {
                        let value = unsafe { *buffer.buffer.get_unchecked(offset) };
                        let value: ::core::result::Result<Self, _> =
                            ::core::convert::TryInto::try_into(value);
                        value.map_err(|error_kind| {
                            error_kind.with_error_location(
                                "ReductionMode",
                                "VectorRead::from_buffer",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<ReductionMode> for ReductionMode {
                    const STRIDE: usize = 1;

                    type Value = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> Self {
                        *self
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[Self],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 1];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - i as u32,
                            );
                        }
                    }
                }

                ///  One tensor of the graph (kiln-core `TensorDesc`).
                ///
                /// Generated from these locations:
                /// * Table `Tensor` in the file `schemas/graph.fbs:97`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct Tensor {
                    /// The field `uid` in the table `Tensor`
                    pub uid: i64,
                    /// The field `name` in the table `Tensor`
                    pub name: ::core::option::Option<::planus::alloc::string::String>,
                    /// The field `dims` in the table `Tensor`
                    pub dims: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    /// The field `strides` in the table `Tensor`
                    pub strides: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    /// The field `data_type` in the table `Tensor`
                    pub data_type: self::DataType,
                    /// The field `is_virtual` in the table `Tensor`
                    pub is_virtual: bool,
                    ///  Required byte alignment of the device pointer, 0 = none beyond the element size.
                    pub alignment: u32,
                    ///  The value of a by-value scalar operand; absent for ordinary tensors.
                    pub scalar: ::core::option::Option<f64>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for Tensor {
                    fn default() -> Self {
                        Self {
                            uid: 0,
                            name: ::core::default::Default::default(),
                            dims: ::core::default::Default::default(),
                            strides: ::core::default::Default::default(),
                            data_type: self::DataType::F32,
                            is_virtual: false,
                            alignment: 0,
                            scalar: ::core::default::Default::default(),
                        }
                    }
                }

                impl Tensor {
                    /// Creates a [TensorBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> TensorBuilder<()> {
                        TensorBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_uid: impl ::planus::WriteAsDefault<i64, i64>,
                        field_name: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                        field_dims: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_strides: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_data_type: impl ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        field_is_virtual: impl ::planus::WriteAsDefault<bool, bool>,
                        field_alignment: impl ::planus::WriteAsDefault<u32, u32>,
                        field_scalar: impl ::planus::WriteAsOptional<f64>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_uid = field_uid.prepare(builder, &0);
                        let prepared_name = field_name.prepare(builder);
                        let prepared_dims = field_dims.prepare(builder);
                        let prepared_strides = field_strides.prepare(builder);
                        let prepared_data_type =
                            field_data_type.prepare(builder, &self::DataType::F32);
                        let prepared_is_virtual = field_is_virtual.prepare(builder, &false);
                        let prepared_alignment = field_alignment.prepare(builder, &0);
                        let prepared_scalar = field_scalar.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<20> =
                            ::core::default::Default::default();
                        if prepared_uid.is_some() {
                            table_writer.write_entry::<i64>(0);
                        }
                        if prepared_scalar.is_some() {
                            table_writer.write_entry::<f64>(7);
                        }
                        if prepared_name.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(1);
                        }
                        if prepared_dims.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(2);
                        }
                        if prepared_strides.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(3);
                        }
                        if prepared_alignment.is_some() {
                            table_writer.write_entry::<u32>(6);
                        }
                        if prepared_data_type.is_some() {
                            table_writer.write_entry::<self::DataType>(4);
                        }
                        if prepared_is_virtual.is_some() {
                            table_writer.write_entry::<bool>(5);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_uid) = prepared_uid {
                                    object_writer.write::<_, _, 8>(&prepared_uid);
                                }
                                if let ::core::option::Option::Some(prepared_scalar) =
                                    prepared_scalar
                                {
                                    object_writer.write::<_, _, 8>(&prepared_scalar);
                                }
                                if let ::core::option::Option::Some(prepared_name) = prepared_name {
                                    object_writer.write::<_, _, 4>(&prepared_name);
                                }
                                if let ::core::option::Option::Some(prepared_dims) = prepared_dims {
                                    object_writer.write::<_, _, 4>(&prepared_dims);
                                }
                                if let ::core::option::Option::Some(prepared_strides) =
                                    prepared_strides
                                {
                                    object_writer.write::<_, _, 4>(&prepared_strides);
                                }
                                if let ::core::option::Option::Some(prepared_alignment) =
                                    prepared_alignment
                                {
                                    object_writer.write::<_, _, 4>(&prepared_alignment);
                                }
                                if let ::core::option::Option::Some(prepared_data_type) =
                                    prepared_data_type
                                {
                                    object_writer.write::<_, _, 1>(&prepared_data_type);
                                }
                                if let ::core::option::Option::Some(prepared_is_virtual) =
                                    prepared_is_virtual
                                {
                                    object_writer.write::<_, _, 1>(&prepared_is_virtual);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<Tensor>> for Tensor {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<Tensor>> for Tensor {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Tensor>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<Tensor> for Tensor {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                        Tensor::create(
                            builder,
                            self.uid,
                            &self.name,
                            &self.dims,
                            &self.strides,
                            self.data_type,
                            self.is_virtual,
                            self.alignment,
                            self.scalar,
                        )
                    }
                }

                /// Builder for serializing an instance of the [Tensor] type.
                ///
                /// Can be created using the [Tensor::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct TensorBuilder<State>(State);

                impl TensorBuilder<()> {
                    /// Setter for the [`uid` field](Tensor#structfield.uid).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn uid<T0>(self, value: T0) -> TensorBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<i64, i64>,
                    {
                        TensorBuilder((value,))
                    }

                    /// Sets the [`uid` field](Tensor#structfield.uid) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn uid_as_default(self) -> TensorBuilder<(::planus::DefaultValue,)> {
                        self.uid(::planus::DefaultValue)
                    }
                }

                impl<T0> TensorBuilder<(T0,)> {
                    /// Setter for the [`name` field](Tensor#structfield.name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name<T1>(self, value: T1) -> TensorBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        let (v0,) = self.0;
                        TensorBuilder((v0, value))
                    }

                    /// Sets the [`name` field](Tensor#structfield.name) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name_as_null(self) -> TensorBuilder<(T0, ())> {
                        self.name(())
                    }
                }

                impl<T0, T1> TensorBuilder<(T0, T1)> {
                    /// Setter for the [`dims` field](Tensor#structfield.dims).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn dims<T2>(self, value: T2) -> TensorBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1) = self.0;
                        TensorBuilder((v0, v1, value))
                    }

                    /// Sets the [`dims` field](Tensor#structfield.dims) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn dims_as_null(self) -> TensorBuilder<(T0, T1, ())> {
                        self.dims(())
                    }
                }

                impl<T0, T1, T2> TensorBuilder<(T0, T1, T2)> {
                    /// Setter for the [`strides` field](Tensor#structfield.strides).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn strides<T3>(self, value: T3) -> TensorBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2) = self.0;
                        TensorBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`strides` field](Tensor#structfield.strides) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn strides_as_null(self) -> TensorBuilder<(T0, T1, T2, ())> {
                        self.strides(())
                    }
                }

                impl<T0, T1, T2, T3> TensorBuilder<(T0, T1, T2, T3)> {
                    /// Setter for the [`data_type` field](Tensor#structfield.data_type).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn data_type<T4>(self, value: T4) -> TensorBuilder<(T0, T1, T2, T3, T4)>
                    where
                        T4: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                    {
                        let (v0, v1, v2, v3) = self.0;
                        TensorBuilder((v0, v1, v2, v3, value))
                    }

                    /// Sets the [`data_type` field](Tensor#structfield.data_type) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn data_type_as_default(
                        self,
                    ) -> TensorBuilder<(T0, T1, T2, T3, ::planus::DefaultValue)>
                    {
                        self.data_type(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3, T4> TensorBuilder<(T0, T1, T2, T3, T4)> {
                    /// Setter for the [`is_virtual` field](Tensor#structfield.is_virtual).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn is_virtual<T5>(
                        self,
                        value: T5,
                    ) -> TensorBuilder<(T0, T1, T2, T3, T4, T5)>
                    where
                        T5: ::planus::WriteAsDefault<bool, bool>,
                    {
                        let (v0, v1, v2, v3, v4) = self.0;
                        TensorBuilder((v0, v1, v2, v3, v4, value))
                    }

                    /// Sets the [`is_virtual` field](Tensor#structfield.is_virtual) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn is_virtual_as_default(
                        self,
                    ) -> TensorBuilder<(T0, T1, T2, T3, T4, ::planus::DefaultValue)>
                    {
                        self.is_virtual(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3, T4, T5> TensorBuilder<(T0, T1, T2, T3, T4, T5)> {
                    /// Setter for the [`alignment` field](Tensor#structfield.alignment).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn alignment<T6>(
                        self,
                        value: T6,
                    ) -> TensorBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                    where
                        T6: ::planus::WriteAsDefault<u32, u32>,
                    {
                        let (v0, v1, v2, v3, v4, v5) = self.0;
                        TensorBuilder((v0, v1, v2, v3, v4, v5, value))
                    }

                    /// Sets the [`alignment` field](Tensor#structfield.alignment) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn alignment_as_default(
                        self,
                    ) -> TensorBuilder<(T0, T1, T2, T3, T4, T5, ::planus::DefaultValue)>
                    {
                        self.alignment(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6> TensorBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                    /// Setter for the [`scalar` field](Tensor#structfield.scalar).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn scalar<T7>(
                        self,
                        value: T7,
                    ) -> TensorBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                    where
                        T7: ::planus::WriteAsOptional<f64>,
                    {
                        let (v0, v1, v2, v3, v4, v5, v6) = self.0;
                        TensorBuilder((v0, v1, v2, v3, v4, v5, v6, value))
                    }

                    /// Sets the [`scalar` field](Tensor#structfield.scalar) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn scalar_as_null(self) -> TensorBuilder<(T0, T1, T2, T3, T4, T5, T6, ())> {
                        self.scalar(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6, T7> TensorBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Tensor].
                    #[inline]
                    pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor>
                    where
                        Self: ::planus::WriteAsOffset<Tensor>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T4: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        T5: ::planus::WriteAsDefault<bool, bool>,
                        T6: ::planus::WriteAsDefault<u32, u32>,
                        T7: ::planus::WriteAsOptional<f64>,
                    > ::planus::WriteAs<::planus::Offset<Tensor>>
                    for TensorBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    type Prepared = ::planus::Offset<Tensor>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T4: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        T5: ::planus::WriteAsDefault<bool, bool>,
                        T6: ::planus::WriteAsDefault<u32, u32>,
                        T7: ::planus::WriteAsOptional<f64>,
                    > ::planus::WriteAsOptional<::planus::Offset<Tensor>>
                    for TensorBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    type Prepared = ::planus::Offset<Tensor>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Tensor>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T4: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        T5: ::planus::WriteAsDefault<bool, bool>,
                        T6: ::planus::WriteAsDefault<u32, u32>,
                        T7: ::planus::WriteAsOptional<f64>,
                    > ::planus::WriteAsOffset<Tensor>
                    for TensorBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                        let (v0, v1, v2, v3, v4, v5, v6, v7) = &self.0;
                        Tensor::create(builder, v0, v1, v2, v3, v4, v5, v6, v7)
                    }
                }

                /// Reference to a deserialized [Tensor].
                #[derive(Copy, Clone)]
                pub struct TensorRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> TensorRef<'a> {
                    /// Getter for the [`uid` field](Tensor#structfield.uid).
                    #[inline]
                    pub fn uid(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(0, "Tensor", "uid")?.unwrap_or(0))
                    }

                    /// Getter for the [`name` field](Tensor#structfield.name).
                    #[inline]
                    pub fn name(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(1, "Tensor", "name")
                    }

                    /// Getter for the [`dims` field](Tensor#structfield.dims).
                    #[inline]
                    pub fn dims(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(2, "Tensor", "dims")
                    }

                    /// Getter for the [`strides` field](Tensor#structfield.strides).
                    #[inline]
                    pub fn strides(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(3, "Tensor", "strides")
                    }

                    /// Getter for the [`data_type` field](Tensor#structfield.data_type).
                    #[inline]
                    pub fn data_type(&self) -> ::planus::Result<self::DataType> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(4, "Tensor", "data_type")?
                                .unwrap_or(self::DataType::F32),
                        )
                    }

                    /// Getter for the [`is_virtual` field](Tensor#structfield.is_virtual).
                    #[inline]
                    pub fn is_virtual(&self) -> ::planus::Result<bool> {
                        ::core::result::Result::Ok(
                            self.0.access(5, "Tensor", "is_virtual")?.unwrap_or(false),
                        )
                    }

                    /// Getter for the [`alignment` field](Tensor#structfield.alignment).
                    #[inline]
                    pub fn alignment(&self) -> ::planus::Result<u32> {
                        ::core::result::Result::Ok(
                            self.0.access(6, "Tensor", "alignment")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`scalar` field](Tensor#structfield.scalar).
                    #[inline]
                    pub fn scalar(&self) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(7, "Tensor", "scalar")
                    }
                }

                impl<'a> ::core::fmt::Debug for TensorRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("TensorRef");
                        f.field("uid", &self.uid());
                        if let ::core::option::Option::Some(field_name) = self.name().transpose() {
                            f.field("name", &field_name);
                        }
                        if let ::core::option::Option::Some(field_dims) = self.dims().transpose() {
                            f.field("dims", &field_dims);
                        }
                        if let ::core::option::Option::Some(field_strides) =
                            self.strides().transpose()
                        {
                            f.field("strides", &field_strides);
                        }
                        f.field("data_type", &self.data_type());
                        f.field("is_virtual", &self.is_virtual());
                        f.field("alignment", &self.alignment());
                        if let ::core::option::Option::Some(field_scalar) =
                            self.scalar().transpose()
                        {
                            f.field("scalar", &field_scalar);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<TensorRef<'a>> for Tensor {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: TensorRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            uid: ::core::convert::TryInto::try_into(value.uid()?)?,
                            name: value.name()?.map(::core::convert::Into::into),
                            dims: if let ::core::option::Option::Some(dims) = value.dims()? {
                                ::core::option::Option::Some(dims.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            strides: if let ::core::option::Option::Some(strides) =
                                value.strides()?
                            {
                                ::core::option::Option::Some(strides.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            data_type: ::core::convert::TryInto::try_into(value.data_type()?)?,
                            is_virtual: ::core::convert::TryInto::try_into(value.is_virtual()?)?,
                            alignment: ::core::convert::TryInto::try_into(value.alignment()?)?,
                            scalar: if let ::core::option::Option::Some(scalar) = value.scalar()? {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    scalar,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for TensorRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for TensorRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[TensorRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<Tensor>> for Tensor {
                    type Value = ::planus::Offset<Tensor>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<Tensor>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for TensorRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[TensorRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  Optional pointwise parameters; an absent field means the documented default.
                ///
                /// Generated from these locations:
                /// * Table `PointwiseParams` in the file `schemas/graph.fbs:111`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct PointwiseParams {
                    /// The field `relu_lower_clip` in the table `PointwiseParams`
                    pub relu_lower_clip: ::core::option::Option<f64>,
                    /// The field `relu_upper_clip` in the table `PointwiseParams`
                    pub relu_upper_clip: ::core::option::Option<f64>,
                    /// The field `relu_lower_clip_slope` in the table `PointwiseParams`
                    pub relu_lower_clip_slope: ::core::option::Option<f64>,
                    /// The field `elu_alpha` in the table `PointwiseParams`
                    pub elu_alpha: ::core::option::Option<f64>,
                    /// The field `softplus_beta` in the table `PointwiseParams`
                    pub softplus_beta: ::core::option::Option<f64>,
                    /// The field `swish_beta` in the table `PointwiseParams`
                    pub swish_beta: ::core::option::Option<f64>,
                    ///  Graph minor 2: the dim `GenIndex` counts along; absent = 0.
                    pub axis: ::core::option::Option<i64>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for PointwiseParams {
                    fn default() -> Self {
                        Self {
                            relu_lower_clip: ::core::default::Default::default(),
                            relu_upper_clip: ::core::default::Default::default(),
                            relu_lower_clip_slope: ::core::default::Default::default(),
                            elu_alpha: ::core::default::Default::default(),
                            softplus_beta: ::core::default::Default::default(),
                            swish_beta: ::core::default::Default::default(),
                            axis: ::core::default::Default::default(),
                        }
                    }
                }

                impl PointwiseParams {
                    /// Creates a [PointwiseParamsBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> PointwiseParamsBuilder<()> {
                        PointwiseParamsBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_relu_lower_clip: impl ::planus::WriteAsOptional<f64>,
                        field_relu_upper_clip: impl ::planus::WriteAsOptional<f64>,
                        field_relu_lower_clip_slope: impl ::planus::WriteAsOptional<f64>,
                        field_elu_alpha: impl ::planus::WriteAsOptional<f64>,
                        field_softplus_beta: impl ::planus::WriteAsOptional<f64>,
                        field_swish_beta: impl ::planus::WriteAsOptional<f64>,
                        field_axis: impl ::planus::WriteAsOptional<i64>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_relu_lower_clip = field_relu_lower_clip.prepare(builder);
                        let prepared_relu_upper_clip = field_relu_upper_clip.prepare(builder);
                        let prepared_relu_lower_clip_slope =
                            field_relu_lower_clip_slope.prepare(builder);
                        let prepared_elu_alpha = field_elu_alpha.prepare(builder);
                        let prepared_softplus_beta = field_softplus_beta.prepare(builder);
                        let prepared_swish_beta = field_swish_beta.prepare(builder);
                        let prepared_axis = field_axis.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<18> =
                            ::core::default::Default::default();
                        if prepared_relu_lower_clip.is_some() {
                            table_writer.write_entry::<f64>(0);
                        }
                        if prepared_relu_upper_clip.is_some() {
                            table_writer.write_entry::<f64>(1);
                        }
                        if prepared_relu_lower_clip_slope.is_some() {
                            table_writer.write_entry::<f64>(2);
                        }
                        if prepared_elu_alpha.is_some() {
                            table_writer.write_entry::<f64>(3);
                        }
                        if prepared_softplus_beta.is_some() {
                            table_writer.write_entry::<f64>(4);
                        }
                        if prepared_swish_beta.is_some() {
                            table_writer.write_entry::<f64>(5);
                        }
                        if prepared_axis.is_some() {
                            table_writer.write_entry::<i64>(6);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_relu_lower_clip) =
                                    prepared_relu_lower_clip
                                {
                                    object_writer.write::<_, _, 8>(&prepared_relu_lower_clip);
                                }
                                if let ::core::option::Option::Some(prepared_relu_upper_clip) =
                                    prepared_relu_upper_clip
                                {
                                    object_writer.write::<_, _, 8>(&prepared_relu_upper_clip);
                                }
                                if let ::core::option::Option::Some(
                                    prepared_relu_lower_clip_slope,
                                ) = prepared_relu_lower_clip_slope
                                {
                                    object_writer.write::<_, _, 8>(&prepared_relu_lower_clip_slope);
                                }
                                if let ::core::option::Option::Some(prepared_elu_alpha) =
                                    prepared_elu_alpha
                                {
                                    object_writer.write::<_, _, 8>(&prepared_elu_alpha);
                                }
                                if let ::core::option::Option::Some(prepared_softplus_beta) =
                                    prepared_softplus_beta
                                {
                                    object_writer.write::<_, _, 8>(&prepared_softplus_beta);
                                }
                                if let ::core::option::Option::Some(prepared_swish_beta) =
                                    prepared_swish_beta
                                {
                                    object_writer.write::<_, _, 8>(&prepared_swish_beta);
                                }
                                if let ::core::option::Option::Some(prepared_axis) = prepared_axis {
                                    object_writer.write::<_, _, 8>(&prepared_axis);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<PointwiseParams>> for PointwiseParams {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseParams> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<PointwiseParams>> for PointwiseParams {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<PointwiseParams>>
                    {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<PointwiseParams> for PointwiseParams {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseParams> {
                        PointwiseParams::create(
                            builder,
                            self.relu_lower_clip,
                            self.relu_upper_clip,
                            self.relu_lower_clip_slope,
                            self.elu_alpha,
                            self.softplus_beta,
                            self.swish_beta,
                            self.axis,
                        )
                    }
                }

                /// Builder for serializing an instance of the [PointwiseParams] type.
                ///
                /// Can be created using the [PointwiseParams::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct PointwiseParamsBuilder<State>(State);

                impl PointwiseParamsBuilder<()> {
                    /// Setter for the [`relu_lower_clip` field](PointwiseParams#structfield.relu_lower_clip).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn relu_lower_clip<T0>(self, value: T0) -> PointwiseParamsBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsOptional<f64>,
                    {
                        PointwiseParamsBuilder((value,))
                    }

                    /// Sets the [`relu_lower_clip` field](PointwiseParams#structfield.relu_lower_clip) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn relu_lower_clip_as_null(self) -> PointwiseParamsBuilder<((),)> {
                        self.relu_lower_clip(())
                    }
                }

                impl<T0> PointwiseParamsBuilder<(T0,)> {
                    /// Setter for the [`relu_upper_clip` field](PointwiseParams#structfield.relu_upper_clip).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn relu_upper_clip<T1>(self, value: T1) -> PointwiseParamsBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsOptional<f64>,
                    {
                        let (v0,) = self.0;
                        PointwiseParamsBuilder((v0, value))
                    }

                    /// Sets the [`relu_upper_clip` field](PointwiseParams#structfield.relu_upper_clip) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn relu_upper_clip_as_null(self) -> PointwiseParamsBuilder<(T0, ())> {
                        self.relu_upper_clip(())
                    }
                }

                impl<T0, T1> PointwiseParamsBuilder<(T0, T1)> {
                    /// Setter for the [`relu_lower_clip_slope` field](PointwiseParams#structfield.relu_lower_clip_slope).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn relu_lower_clip_slope<T2>(
                        self,
                        value: T2,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsOptional<f64>,
                    {
                        let (v0, v1) = self.0;
                        PointwiseParamsBuilder((v0, v1, value))
                    }

                    /// Sets the [`relu_lower_clip_slope` field](PointwiseParams#structfield.relu_lower_clip_slope) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn relu_lower_clip_slope_as_null(
                        self,
                    ) -> PointwiseParamsBuilder<(T0, T1, ())> {
                        self.relu_lower_clip_slope(())
                    }
                }

                impl<T0, T1, T2> PointwiseParamsBuilder<(T0, T1, T2)> {
                    /// Setter for the [`elu_alpha` field](PointwiseParams#structfield.elu_alpha).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn elu_alpha<T3>(
                        self,
                        value: T3,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsOptional<f64>,
                    {
                        let (v0, v1, v2) = self.0;
                        PointwiseParamsBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`elu_alpha` field](PointwiseParams#structfield.elu_alpha) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn elu_alpha_as_null(self) -> PointwiseParamsBuilder<(T0, T1, T2, ())> {
                        self.elu_alpha(())
                    }
                }

                impl<T0, T1, T2, T3> PointwiseParamsBuilder<(T0, T1, T2, T3)> {
                    /// Setter for the [`softplus_beta` field](PointwiseParams#structfield.softplus_beta).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn softplus_beta<T4>(
                        self,
                        value: T4,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3, T4)>
                    where
                        T4: ::planus::WriteAsOptional<f64>,
                    {
                        let (v0, v1, v2, v3) = self.0;
                        PointwiseParamsBuilder((v0, v1, v2, v3, value))
                    }

                    /// Sets the [`softplus_beta` field](PointwiseParams#structfield.softplus_beta) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn softplus_beta_as_null(
                        self,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3, ())> {
                        self.softplus_beta(())
                    }
                }

                impl<T0, T1, T2, T3, T4> PointwiseParamsBuilder<(T0, T1, T2, T3, T4)> {
                    /// Setter for the [`swish_beta` field](PointwiseParams#structfield.swish_beta).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn swish_beta<T5>(
                        self,
                        value: T5,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5)>
                    where
                        T5: ::planus::WriteAsOptional<f64>,
                    {
                        let (v0, v1, v2, v3, v4) = self.0;
                        PointwiseParamsBuilder((v0, v1, v2, v3, v4, value))
                    }

                    /// Sets the [`swish_beta` field](PointwiseParams#structfield.swish_beta) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn swish_beta_as_null(
                        self,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3, T4, ())> {
                        self.swish_beta(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5> PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5)> {
                    /// Setter for the [`axis` field](PointwiseParams#structfield.axis).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn axis<T6>(
                        self,
                        value: T6,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                    where
                        T6: ::planus::WriteAsOptional<i64>,
                    {
                        let (v0, v1, v2, v3, v4, v5) = self.0;
                        PointwiseParamsBuilder((v0, v1, v2, v3, v4, v5, value))
                    }

                    /// Sets the [`axis` field](PointwiseParams#structfield.axis) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn axis_as_null(
                        self,
                    ) -> PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5, ())> {
                        self.axis(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6> PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [PointwiseParams].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseParams>
                    where
                        Self: ::planus::WriteAsOffset<PointwiseParams>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<f64>,
                        T1: ::planus::WriteAsOptional<f64>,
                        T2: ::planus::WriteAsOptional<f64>,
                        T3: ::planus::WriteAsOptional<f64>,
                        T4: ::planus::WriteAsOptional<f64>,
                        T5: ::planus::WriteAsOptional<f64>,
                        T6: ::planus::WriteAsOptional<i64>,
                    > ::planus::WriteAs<::planus::Offset<PointwiseParams>>
                    for PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                {
                    type Prepared = ::planus::Offset<PointwiseParams>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseParams> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<f64>,
                        T1: ::planus::WriteAsOptional<f64>,
                        T2: ::planus::WriteAsOptional<f64>,
                        T3: ::planus::WriteAsOptional<f64>,
                        T4: ::planus::WriteAsOptional<f64>,
                        T5: ::planus::WriteAsOptional<f64>,
                        T6: ::planus::WriteAsOptional<i64>,
                    > ::planus::WriteAsOptional<::planus::Offset<PointwiseParams>>
                    for PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                {
                    type Prepared = ::planus::Offset<PointwiseParams>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<PointwiseParams>>
                    {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<f64>,
                        T1: ::planus::WriteAsOptional<f64>,
                        T2: ::planus::WriteAsOptional<f64>,
                        T3: ::planus::WriteAsOptional<f64>,
                        T4: ::planus::WriteAsOptional<f64>,
                        T5: ::planus::WriteAsOptional<f64>,
                        T6: ::planus::WriteAsOptional<i64>,
                    > ::planus::WriteAsOffset<PointwiseParams>
                    for PointwiseParamsBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseParams> {
                        let (v0, v1, v2, v3, v4, v5, v6) = &self.0;
                        PointwiseParams::create(builder, v0, v1, v2, v3, v4, v5, v6)
                    }
                }

                /// Reference to a deserialized [PointwiseParams].
                #[derive(Copy, Clone)]
                pub struct PointwiseParamsRef<'a>(
                    #[allow(dead_code)] ::planus::table_reader::Table<'a>,
                );

                impl<'a> PointwiseParamsRef<'a> {
                    /// Getter for the [`relu_lower_clip` field](PointwiseParams#structfield.relu_lower_clip).
                    #[inline]
                    pub fn relu_lower_clip(&self) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(0, "PointwiseParams", "relu_lower_clip")
                    }

                    /// Getter for the [`relu_upper_clip` field](PointwiseParams#structfield.relu_upper_clip).
                    #[inline]
                    pub fn relu_upper_clip(&self) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(1, "PointwiseParams", "relu_upper_clip")
                    }

                    /// Getter for the [`relu_lower_clip_slope` field](PointwiseParams#structfield.relu_lower_clip_slope).
                    #[inline]
                    pub fn relu_lower_clip_slope(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(2, "PointwiseParams", "relu_lower_clip_slope")
                    }

                    /// Getter for the [`elu_alpha` field](PointwiseParams#structfield.elu_alpha).
                    #[inline]
                    pub fn elu_alpha(&self) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(3, "PointwiseParams", "elu_alpha")
                    }

                    /// Getter for the [`softplus_beta` field](PointwiseParams#structfield.softplus_beta).
                    #[inline]
                    pub fn softplus_beta(&self) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(4, "PointwiseParams", "softplus_beta")
                    }

                    /// Getter for the [`swish_beta` field](PointwiseParams#structfield.swish_beta).
                    #[inline]
                    pub fn swish_beta(&self) -> ::planus::Result<::core::option::Option<f64>> {
                        self.0.access(5, "PointwiseParams", "swish_beta")
                    }

                    /// Getter for the [`axis` field](PointwiseParams#structfield.axis).
                    #[inline]
                    pub fn axis(&self) -> ::planus::Result<::core::option::Option<i64>> {
                        self.0.access(6, "PointwiseParams", "axis")
                    }
                }

                impl<'a> ::core::fmt::Debug for PointwiseParamsRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("PointwiseParamsRef");
                        if let ::core::option::Option::Some(field_relu_lower_clip) =
                            self.relu_lower_clip().transpose()
                        {
                            f.field("relu_lower_clip", &field_relu_lower_clip);
                        }
                        if let ::core::option::Option::Some(field_relu_upper_clip) =
                            self.relu_upper_clip().transpose()
                        {
                            f.field("relu_upper_clip", &field_relu_upper_clip);
                        }
                        if let ::core::option::Option::Some(field_relu_lower_clip_slope) =
                            self.relu_lower_clip_slope().transpose()
                        {
                            f.field("relu_lower_clip_slope", &field_relu_lower_clip_slope);
                        }
                        if let ::core::option::Option::Some(field_elu_alpha) =
                            self.elu_alpha().transpose()
                        {
                            f.field("elu_alpha", &field_elu_alpha);
                        }
                        if let ::core::option::Option::Some(field_softplus_beta) =
                            self.softplus_beta().transpose()
                        {
                            f.field("softplus_beta", &field_softplus_beta);
                        }
                        if let ::core::option::Option::Some(field_swish_beta) =
                            self.swish_beta().transpose()
                        {
                            f.field("swish_beta", &field_swish_beta);
                        }
                        if let ::core::option::Option::Some(field_axis) = self.axis().transpose() {
                            f.field("axis", &field_axis);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<PointwiseParamsRef<'a>> for PointwiseParams {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: PointwiseParamsRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            relu_lower_clip: if let ::core::option::Option::Some(relu_lower_clip) =
                                value.relu_lower_clip()?
                            {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    relu_lower_clip,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                            relu_upper_clip: if let ::core::option::Option::Some(relu_upper_clip) =
                                value.relu_upper_clip()?
                            {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    relu_upper_clip,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                            relu_lower_clip_slope: if let ::core::option::Option::Some(
                                relu_lower_clip_slope,
                            ) = value.relu_lower_clip_slope()?
                            {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    relu_lower_clip_slope,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                            elu_alpha: if let ::core::option::Option::Some(elu_alpha) =
                                value.elu_alpha()?
                            {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    elu_alpha,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                            softplus_beta: if let ::core::option::Option::Some(softplus_beta) =
                                value.softplus_beta()?
                            {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    softplus_beta,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                            swish_beta: if let ::core::option::Option::Some(swish_beta) =
                                value.swish_beta()?
                            {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    swish_beta,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                            axis: if let ::core::option::Option::Some(axis) = value.axis()? {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(
                                    axis,
                                )?)
                            } else {
                                ::core::option::Option::None
                            },
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for PointwiseParamsRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for PointwiseParamsRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[PointwiseParamsRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<PointwiseParams>> for PointwiseParams {
                    type Value = ::planus::Offset<PointwiseParams>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<PointwiseParams>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for PointwiseParamsRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[PointwiseParamsRef]",
                                "read_as_root",
                                0,
                            )
                        })
                    }
                }

                ///  `out = mode(a[, b[, c]])`.
                ///
                /// Generated from these locations:
                /// * Table `PointwiseOp` in the file `schemas/graph.fbs:123`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct PointwiseOp {
                    /// The field `mode` in the table `PointwiseOp`
                    pub mode: self::PointwiseMode,
                    /// The field `a` in the table `PointwiseOp`
                    pub a: i64,
                    ///  Second operand of binary and ternary modes; absent for unary modes.
                    pub b: ::core::option::Option<i64>,
                    /// The field `out` in the table `PointwiseOp`
                    pub out: i64,
                    /// The field `params` in the table `PointwiseOp`
                    pub params:
                        ::core::option::Option<::planus::alloc::boxed::Box<self::PointwiseParams>>,
                    ///  Graph minor 2: the third operand (the mask of `BinarySelect`); absent otherwise.
                    pub c: ::core::option::Option<i64>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for PointwiseOp {
                    fn default() -> Self {
                        Self {
                            mode: self::PointwiseMode::Add,
                            a: 0,
                            b: ::core::default::Default::default(),
                            out: 0,
                            params: ::core::default::Default::default(),
                            c: ::core::default::Default::default(),
                        }
                    }
                }

                impl PointwiseOp {
                    /// Creates a [PointwiseOpBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> PointwiseOpBuilder<()> {
                        PointwiseOpBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_mode: impl ::planus::WriteAsDefault<
                            self::PointwiseMode,
                            self::PointwiseMode,
                        >,
                        field_a: impl ::planus::WriteAsDefault<i64, i64>,
                        field_b: impl ::planus::WriteAsOptional<i64>,
                        field_out: impl ::planus::WriteAsDefault<i64, i64>,
                        field_params: impl ::planus::WriteAsOptional<
                            ::planus::Offset<self::PointwiseParams>,
                        >,
                        field_c: impl ::planus::WriteAsOptional<i64>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_mode = field_mode.prepare(builder, &self::PointwiseMode::Add);
                        let prepared_a = field_a.prepare(builder, &0);
                        let prepared_b = field_b.prepare(builder);
                        let prepared_out = field_out.prepare(builder, &0);
                        let prepared_params = field_params.prepare(builder);
                        let prepared_c = field_c.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<16> =
                            ::core::default::Default::default();
                        if prepared_a.is_some() {
                            table_writer.write_entry::<i64>(1);
                        }
                        if prepared_b.is_some() {
                            table_writer.write_entry::<i64>(2);
                        }
                        if prepared_out.is_some() {
                            table_writer.write_entry::<i64>(3);
                        }
                        if prepared_c.is_some() {
                            table_writer.write_entry::<i64>(5);
                        }
                        if prepared_params.is_some() {
                            table_writer.write_entry::<::planus::Offset<self::PointwiseParams>>(4);
                        }
                        if prepared_mode.is_some() {
                            table_writer.write_entry::<self::PointwiseMode>(0);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_a) = prepared_a {
                                    object_writer.write::<_, _, 8>(&prepared_a);
                                }
                                if let ::core::option::Option::Some(prepared_b) = prepared_b {
                                    object_writer.write::<_, _, 8>(&prepared_b);
                                }
                                if let ::core::option::Option::Some(prepared_out) = prepared_out {
                                    object_writer.write::<_, _, 8>(&prepared_out);
                                }
                                if let ::core::option::Option::Some(prepared_c) = prepared_c {
                                    object_writer.write::<_, _, 8>(&prepared_c);
                                }
                                if let ::core::option::Option::Some(prepared_params) =
                                    prepared_params
                                {
                                    object_writer.write::<_, _, 4>(&prepared_params);
                                }
                                if let ::core::option::Option::Some(prepared_mode) = prepared_mode {
                                    object_writer.write::<_, _, 1>(&prepared_mode);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<PointwiseOp>> for PointwiseOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<PointwiseOp>> for PointwiseOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<PointwiseOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<PointwiseOp> for PointwiseOp {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseOp> {
                        PointwiseOp::create(
                            builder,
                            self.mode,
                            self.a,
                            self.b,
                            self.out,
                            &self.params,
                            self.c,
                        )
                    }
                }

                /// Builder for serializing an instance of the [PointwiseOp] type.
                ///
                /// Can be created using the [PointwiseOp::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct PointwiseOpBuilder<State>(State);

                impl PointwiseOpBuilder<()> {
                    /// Setter for the [`mode` field](PointwiseOp#structfield.mode).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn mode<T0>(self, value: T0) -> PointwiseOpBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<self::PointwiseMode, self::PointwiseMode>,
                    {
                        PointwiseOpBuilder((value,))
                    }

                    /// Sets the [`mode` field](PointwiseOp#structfield.mode) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn mode_as_default(self) -> PointwiseOpBuilder<(::planus::DefaultValue,)> {
                        self.mode(::planus::DefaultValue)
                    }
                }

                impl<T0> PointwiseOpBuilder<(T0,)> {
                    /// Setter for the [`a` field](PointwiseOp#structfield.a).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn a<T1>(self, value: T1) -> PointwiseOpBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0,) = self.0;
                        PointwiseOpBuilder((v0, value))
                    }

                    /// Sets the [`a` field](PointwiseOp#structfield.a) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn a_as_default(self) -> PointwiseOpBuilder<(T0, ::planus::DefaultValue)> {
                        self.a(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> PointwiseOpBuilder<(T0, T1)> {
                    /// Setter for the [`b` field](PointwiseOp#structfield.b).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn b<T2>(self, value: T2) -> PointwiseOpBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsOptional<i64>,
                    {
                        let (v0, v1) = self.0;
                        PointwiseOpBuilder((v0, v1, value))
                    }

                    /// Sets the [`b` field](PointwiseOp#structfield.b) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn b_as_null(self) -> PointwiseOpBuilder<(T0, T1, ())> {
                        self.b(())
                    }
                }

                impl<T0, T1, T2> PointwiseOpBuilder<(T0, T1, T2)> {
                    /// Setter for the [`out` field](PointwiseOp#structfield.out).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn out<T3>(self, value: T3) -> PointwiseOpBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0, v1, v2) = self.0;
                        PointwiseOpBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`out` field](PointwiseOp#structfield.out) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn out_as_default(
                        self,
                    ) -> PointwiseOpBuilder<(T0, T1, T2, ::planus::DefaultValue)>
                    {
                        self.out(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3> PointwiseOpBuilder<(T0, T1, T2, T3)> {
                    /// Setter for the [`params` field](PointwiseOp#structfield.params).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn params<T4>(self, value: T4) -> PointwiseOpBuilder<(T0, T1, T2, T3, T4)>
                    where
                        T4: ::planus::WriteAsOptional<::planus::Offset<self::PointwiseParams>>,
                    {
                        let (v0, v1, v2, v3) = self.0;
                        PointwiseOpBuilder((v0, v1, v2, v3, value))
                    }

                    /// Sets the [`params` field](PointwiseOp#structfield.params) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn params_as_null(self) -> PointwiseOpBuilder<(T0, T1, T2, T3, ())> {
                        self.params(())
                    }
                }

                impl<T0, T1, T2, T3, T4> PointwiseOpBuilder<(T0, T1, T2, T3, T4)> {
                    /// Setter for the [`c` field](PointwiseOp#structfield.c).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn c<T5>(self, value: T5) -> PointwiseOpBuilder<(T0, T1, T2, T3, T4, T5)>
                    where
                        T5: ::planus::WriteAsOptional<i64>,
                    {
                        let (v0, v1, v2, v3, v4) = self.0;
                        PointwiseOpBuilder((v0, v1, v2, v3, v4, value))
                    }

                    /// Sets the [`c` field](PointwiseOp#structfield.c) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn c_as_null(self) -> PointwiseOpBuilder<(T0, T1, T2, T3, T4, ())> {
                        self.c(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5> PointwiseOpBuilder<(T0, T1, T2, T3, T4, T5)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [PointwiseOp].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseOp>
                    where
                        Self: ::planus::WriteAsOffset<PointwiseOp>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::PointwiseMode, self::PointwiseMode>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsOptional<i64>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<self::PointwiseParams>>,
                        T5: ::planus::WriteAsOptional<i64>,
                    > ::planus::WriteAs<::planus::Offset<PointwiseOp>>
                    for PointwiseOpBuilder<(T0, T1, T2, T3, T4, T5)>
                {
                    type Prepared = ::planus::Offset<PointwiseOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::PointwiseMode, self::PointwiseMode>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsOptional<i64>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<self::PointwiseParams>>,
                        T5: ::planus::WriteAsOptional<i64>,
                    > ::planus::WriteAsOptional<::planus::Offset<PointwiseOp>>
                    for PointwiseOpBuilder<(T0, T1, T2, T3, T4, T5)>
                {
                    type Prepared = ::planus::Offset<PointwiseOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<PointwiseOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::PointwiseMode, self::PointwiseMode>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsOptional<i64>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<self::PointwiseParams>>,
                        T5: ::planus::WriteAsOptional<i64>,
                    > ::planus::WriteAsOffset<PointwiseOp>
                    for PointwiseOpBuilder<(T0, T1, T2, T3, T4, T5)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PointwiseOp> {
                        let (v0, v1, v2, v3, v4, v5) = &self.0;
                        PointwiseOp::create(builder, v0, v1, v2, v3, v4, v5)
                    }
                }

                /// Reference to a deserialized [PointwiseOp].
                #[derive(Copy, Clone)]
                pub struct PointwiseOpRef<'a>(
                    #[allow(dead_code)] ::planus::table_reader::Table<'a>,
                );

                impl<'a> PointwiseOpRef<'a> {
                    /// Getter for the [`mode` field](PointwiseOp#structfield.mode).
                    #[inline]
                    pub fn mode(&self) -> ::planus::Result<self::PointwiseMode> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(0, "PointwiseOp", "mode")?
                                .unwrap_or(self::PointwiseMode::Add),
                        )
                    }

                    /// Getter for the [`a` field](PointwiseOp#structfield.a).
                    #[inline]
                    pub fn a(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(
                            self.0.access(1, "PointwiseOp", "a")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`b` field](PointwiseOp#structfield.b).
                    #[inline]
                    pub fn b(&self) -> ::planus::Result<::core::option::Option<i64>> {
                        self.0.access(2, "PointwiseOp", "b")
                    }

                    /// Getter for the [`out` field](PointwiseOp#structfield.out).
                    #[inline]
                    pub fn out(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(
                            self.0.access(3, "PointwiseOp", "out")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`params` field](PointwiseOp#structfield.params).
                    #[inline]
                    pub fn params(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<self::PointwiseParamsRef<'a>>>
                    {
                        self.0.access(4, "PointwiseOp", "params")
                    }

                    /// Getter for the [`c` field](PointwiseOp#structfield.c).
                    #[inline]
                    pub fn c(&self) -> ::planus::Result<::core::option::Option<i64>> {
                        self.0.access(5, "PointwiseOp", "c")
                    }
                }

                impl<'a> ::core::fmt::Debug for PointwiseOpRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("PointwiseOpRef");
                        f.field("mode", &self.mode());
                        f.field("a", &self.a());
                        if let ::core::option::Option::Some(field_b) = self.b().transpose() {
                            f.field("b", &field_b);
                        }
                        f.field("out", &self.out());
                        if let ::core::option::Option::Some(field_params) =
                            self.params().transpose()
                        {
                            f.field("params", &field_params);
                        }
                        if let ::core::option::Option::Some(field_c) = self.c().transpose() {
                            f.field("c", &field_c);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<PointwiseOpRef<'a>> for PointwiseOp {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: PointwiseOpRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            mode: ::core::convert::TryInto::try_into(value.mode()?)?,
                            a: ::core::convert::TryInto::try_into(value.a()?)?,
                            b: if let ::core::option::Option::Some(b) = value.b()? {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(b)?)
                            } else {
                                ::core::option::Option::None
                            },
                            out: ::core::convert::TryInto::try_into(value.out()?)?,
                            params: if let ::core::option::Option::Some(params) = value.params()? {
                                ::core::option::Option::Some(::planus::alloc::boxed::Box::new(
                                    ::core::convert::TryInto::try_into(params)?,
                                ))
                            } else {
                                ::core::option::Option::None
                            },
                            c: if let ::core::option::Option::Some(c) = value.c()? {
                                ::core::option::Option::Some(::core::convert::TryInto::try_into(c)?)
                            } else {
                                ::core::option::Option::None
                            },
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for PointwiseOpRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for PointwiseOpRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[PointwiseOpRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<PointwiseOp>> for PointwiseOp {
                    type Value = ::planus::Offset<PointwiseOp>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<PointwiseOp>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for PointwiseOpRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[PointwiseOpRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  Convolution of any direction; the four geometry vectors have one entry per spatial dim.
                ///
                /// Generated from these locations:
                /// * Table `ConvOp` in the file `schemas/graph.fbs:135`
                #[derive(
                    Clone,
                    Debug,
                    PartialEq,
                    PartialOrd,
                    Eq,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                pub struct ConvOp {
                    /// The field `direction` in the table `ConvOp`
                    pub direction: self::ConvDirection,
                    /// The field `x` in the table `ConvOp`
                    pub x: i64,
                    /// The field `w` in the table `ConvOp`
                    pub w: i64,
                    /// The field `y` in the table `ConvOp`
                    pub y: i64,
                    /// The field `pre_padding` in the table `ConvOp`
                    pub pre_padding: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    /// The field `post_padding` in the table `ConvOp`
                    pub post_padding: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    /// The field `stride` in the table `ConvOp`
                    pub stride: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    /// The field `dilation` in the table `ConvOp`
                    pub dilation: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for ConvOp {
                    fn default() -> Self {
                        Self {
                            direction: self::ConvDirection::Fprop,
                            x: 0,
                            w: 0,
                            y: 0,
                            pre_padding: ::core::default::Default::default(),
                            post_padding: ::core::default::Default::default(),
                            stride: ::core::default::Default::default(),
                            dilation: ::core::default::Default::default(),
                        }
                    }
                }

                impl ConvOp {
                    /// Creates a [ConvOpBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> ConvOpBuilder<()> {
                        ConvOpBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_direction: impl ::planus::WriteAsDefault<
                            self::ConvDirection,
                            self::ConvDirection,
                        >,
                        field_x: impl ::planus::WriteAsDefault<i64, i64>,
                        field_w: impl ::planus::WriteAsDefault<i64, i64>,
                        field_y: impl ::planus::WriteAsDefault<i64, i64>,
                        field_pre_padding: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_post_padding: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_stride: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_dilation: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_direction =
                            field_direction.prepare(builder, &self::ConvDirection::Fprop);
                        let prepared_x = field_x.prepare(builder, &0);
                        let prepared_w = field_w.prepare(builder, &0);
                        let prepared_y = field_y.prepare(builder, &0);
                        let prepared_pre_padding = field_pre_padding.prepare(builder);
                        let prepared_post_padding = field_post_padding.prepare(builder);
                        let prepared_stride = field_stride.prepare(builder);
                        let prepared_dilation = field_dilation.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<20> =
                            ::core::default::Default::default();
                        if prepared_x.is_some() {
                            table_writer.write_entry::<i64>(1);
                        }
                        if prepared_w.is_some() {
                            table_writer.write_entry::<i64>(2);
                        }
                        if prepared_y.is_some() {
                            table_writer.write_entry::<i64>(3);
                        }
                        if prepared_pre_padding.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(4);
                        }
                        if prepared_post_padding.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(5);
                        }
                        if prepared_stride.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(6);
                        }
                        if prepared_dilation.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(7);
                        }
                        if prepared_direction.is_some() {
                            table_writer.write_entry::<self::ConvDirection>(0);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_x) = prepared_x {
                                    object_writer.write::<_, _, 8>(&prepared_x);
                                }
                                if let ::core::option::Option::Some(prepared_w) = prepared_w {
                                    object_writer.write::<_, _, 8>(&prepared_w);
                                }
                                if let ::core::option::Option::Some(prepared_y) = prepared_y {
                                    object_writer.write::<_, _, 8>(&prepared_y);
                                }
                                if let ::core::option::Option::Some(prepared_pre_padding) =
                                    prepared_pre_padding
                                {
                                    object_writer.write::<_, _, 4>(&prepared_pre_padding);
                                }
                                if let ::core::option::Option::Some(prepared_post_padding) =
                                    prepared_post_padding
                                {
                                    object_writer.write::<_, _, 4>(&prepared_post_padding);
                                }
                                if let ::core::option::Option::Some(prepared_stride) =
                                    prepared_stride
                                {
                                    object_writer.write::<_, _, 4>(&prepared_stride);
                                }
                                if let ::core::option::Option::Some(prepared_dilation) =
                                    prepared_dilation
                                {
                                    object_writer.write::<_, _, 4>(&prepared_dilation);
                                }
                                if let ::core::option::Option::Some(prepared_direction) =
                                    prepared_direction
                                {
                                    object_writer.write::<_, _, 1>(&prepared_direction);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<ConvOp>> for ConvOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<ConvOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<ConvOp>> for ConvOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<ConvOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<ConvOp> for ConvOp {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<ConvOp> {
                        ConvOp::create(
                            builder,
                            self.direction,
                            self.x,
                            self.w,
                            self.y,
                            &self.pre_padding,
                            &self.post_padding,
                            &self.stride,
                            &self.dilation,
                        )
                    }
                }

                /// Builder for serializing an instance of the [ConvOp] type.
                ///
                /// Can be created using the [ConvOp::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct ConvOpBuilder<State>(State);

                impl ConvOpBuilder<()> {
                    /// Setter for the [`direction` field](ConvOp#structfield.direction).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn direction<T0>(self, value: T0) -> ConvOpBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<self::ConvDirection, self::ConvDirection>,
                    {
                        ConvOpBuilder((value,))
                    }

                    /// Sets the [`direction` field](ConvOp#structfield.direction) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn direction_as_default(self) -> ConvOpBuilder<(::planus::DefaultValue,)> {
                        self.direction(::planus::DefaultValue)
                    }
                }

                impl<T0> ConvOpBuilder<(T0,)> {
                    /// Setter for the [`x` field](ConvOp#structfield.x).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn x<T1>(self, value: T1) -> ConvOpBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0,) = self.0;
                        ConvOpBuilder((v0, value))
                    }

                    /// Sets the [`x` field](ConvOp#structfield.x) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn x_as_default(self) -> ConvOpBuilder<(T0, ::planus::DefaultValue)> {
                        self.x(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> ConvOpBuilder<(T0, T1)> {
                    /// Setter for the [`w` field](ConvOp#structfield.w).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn w<T2>(self, value: T2) -> ConvOpBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0, v1) = self.0;
                        ConvOpBuilder((v0, v1, value))
                    }

                    /// Sets the [`w` field](ConvOp#structfield.w) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn w_as_default(self) -> ConvOpBuilder<(T0, T1, ::planus::DefaultValue)> {
                        self.w(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2> ConvOpBuilder<(T0, T1, T2)> {
                    /// Setter for the [`y` field](ConvOp#structfield.y).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn y<T3>(self, value: T3) -> ConvOpBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0, v1, v2) = self.0;
                        ConvOpBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`y` field](ConvOp#structfield.y) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn y_as_default(
                        self,
                    ) -> ConvOpBuilder<(T0, T1, T2, ::planus::DefaultValue)> {
                        self.y(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3> ConvOpBuilder<(T0, T1, T2, T3)> {
                    /// Setter for the [`pre_padding` field](ConvOp#structfield.pre_padding).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn pre_padding<T4>(self, value: T4) -> ConvOpBuilder<(T0, T1, T2, T3, T4)>
                    where
                        T4: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2, v3) = self.0;
                        ConvOpBuilder((v0, v1, v2, v3, value))
                    }

                    /// Sets the [`pre_padding` field](ConvOp#structfield.pre_padding) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn pre_padding_as_null(self) -> ConvOpBuilder<(T0, T1, T2, T3, ())> {
                        self.pre_padding(())
                    }
                }

                impl<T0, T1, T2, T3, T4> ConvOpBuilder<(T0, T1, T2, T3, T4)> {
                    /// Setter for the [`post_padding` field](ConvOp#structfield.post_padding).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn post_padding<T5>(
                        self,
                        value: T5,
                    ) -> ConvOpBuilder<(T0, T1, T2, T3, T4, T5)>
                    where
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2, v3, v4) = self.0;
                        ConvOpBuilder((v0, v1, v2, v3, v4, value))
                    }

                    /// Sets the [`post_padding` field](ConvOp#structfield.post_padding) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn post_padding_as_null(self) -> ConvOpBuilder<(T0, T1, T2, T3, T4, ())> {
                        self.post_padding(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5> ConvOpBuilder<(T0, T1, T2, T3, T4, T5)> {
                    /// Setter for the [`stride` field](ConvOp#structfield.stride).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn stride<T6>(
                        self,
                        value: T6,
                    ) -> ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                    where
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2, v3, v4, v5) = self.0;
                        ConvOpBuilder((v0, v1, v2, v3, v4, v5, value))
                    }

                    /// Sets the [`stride` field](ConvOp#structfield.stride) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn stride_as_null(self) -> ConvOpBuilder<(T0, T1, T2, T3, T4, T5, ())> {
                        self.stride(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6> ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                    /// Setter for the [`dilation` field](ConvOp#structfield.dilation).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn dilation<T7>(
                        self,
                        value: T7,
                    ) -> ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                    where
                        T7: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2, v3, v4, v5, v6) = self.0;
                        ConvOpBuilder((v0, v1, v2, v3, v4, v5, v6, value))
                    }

                    /// Sets the [`dilation` field](ConvOp#structfield.dilation) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn dilation_as_null(
                        self,
                    ) -> ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6, ())> {
                        self.dilation(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6, T7> ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [ConvOp].
                    #[inline]
                    pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<ConvOp>
                    where
                        Self: ::planus::WriteAsOffset<ConvOp>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::ConvDirection, self::ConvDirection>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    > ::planus::WriteAs<::planus::Offset<ConvOp>>
                    for ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    type Prepared = ::planus::Offset<ConvOp>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<ConvOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::ConvDirection, self::ConvDirection>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    > ::planus::WriteAsOptional<::planus::Offset<ConvOp>>
                    for ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    type Prepared = ::planus::Offset<ConvOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<ConvOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::ConvDirection, self::ConvDirection>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    > ::planus::WriteAsOffset<ConvOp>
                    for ConvOpBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<ConvOp> {
                        let (v0, v1, v2, v3, v4, v5, v6, v7) = &self.0;
                        ConvOp::create(builder, v0, v1, v2, v3, v4, v5, v6, v7)
                    }
                }

                /// Reference to a deserialized [ConvOp].
                #[derive(Copy, Clone)]
                pub struct ConvOpRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> ConvOpRef<'a> {
                    /// Getter for the [`direction` field](ConvOp#structfield.direction).
                    #[inline]
                    pub fn direction(&self) -> ::planus::Result<self::ConvDirection> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(0, "ConvOp", "direction")?
                                .unwrap_or(self::ConvDirection::Fprop),
                        )
                    }

                    /// Getter for the [`x` field](ConvOp#structfield.x).
                    #[inline]
                    pub fn x(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(1, "ConvOp", "x")?.unwrap_or(0))
                    }

                    /// Getter for the [`w` field](ConvOp#structfield.w).
                    #[inline]
                    pub fn w(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(2, "ConvOp", "w")?.unwrap_or(0))
                    }

                    /// Getter for the [`y` field](ConvOp#structfield.y).
                    #[inline]
                    pub fn y(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(3, "ConvOp", "y")?.unwrap_or(0))
                    }

                    /// Getter for the [`pre_padding` field](ConvOp#structfield.pre_padding).
                    #[inline]
                    pub fn pre_padding(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(4, "ConvOp", "pre_padding")
                    }

                    /// Getter for the [`post_padding` field](ConvOp#structfield.post_padding).
                    #[inline]
                    pub fn post_padding(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(5, "ConvOp", "post_padding")
                    }

                    /// Getter for the [`stride` field](ConvOp#structfield.stride).
                    #[inline]
                    pub fn stride(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(6, "ConvOp", "stride")
                    }

                    /// Getter for the [`dilation` field](ConvOp#structfield.dilation).
                    #[inline]
                    pub fn dilation(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(7, "ConvOp", "dilation")
                    }
                }

                impl<'a> ::core::fmt::Debug for ConvOpRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("ConvOpRef");
                        f.field("direction", &self.direction());
                        f.field("x", &self.x());
                        f.field("w", &self.w());
                        f.field("y", &self.y());
                        if let ::core::option::Option::Some(field_pre_padding) =
                            self.pre_padding().transpose()
                        {
                            f.field("pre_padding", &field_pre_padding);
                        }
                        if let ::core::option::Option::Some(field_post_padding) =
                            self.post_padding().transpose()
                        {
                            f.field("post_padding", &field_post_padding);
                        }
                        if let ::core::option::Option::Some(field_stride) =
                            self.stride().transpose()
                        {
                            f.field("stride", &field_stride);
                        }
                        if let ::core::option::Option::Some(field_dilation) =
                            self.dilation().transpose()
                        {
                            f.field("dilation", &field_dilation);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<ConvOpRef<'a>> for ConvOp {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: ConvOpRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            direction: ::core::convert::TryInto::try_into(value.direction()?)?,
                            x: ::core::convert::TryInto::try_into(value.x()?)?,
                            w: ::core::convert::TryInto::try_into(value.w()?)?,
                            y: ::core::convert::TryInto::try_into(value.y()?)?,
                            pre_padding: if let ::core::option::Option::Some(pre_padding) =
                                value.pre_padding()?
                            {
                                ::core::option::Option::Some(pre_padding.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            post_padding: if let ::core::option::Option::Some(post_padding) =
                                value.post_padding()?
                            {
                                ::core::option::Option::Some(post_padding.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            stride: if let ::core::option::Option::Some(stride) = value.stride()? {
                                ::core::option::Option::Some(stride.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            dilation: if let ::core::option::Option::Some(dilation) =
                                value.dilation()?
                            {
                                ::core::option::Option::Some(dilation.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for ConvOpRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for ConvOpRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[ConvOpRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<ConvOp>> for ConvOp {
                    type Value = ::planus::Offset<ConvOp>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<ConvOp>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for ConvOpRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[ConvOpRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  `c = a * b`, batched.
                ///
                /// Generated from these locations:
                /// * Table `MatmulOp` in the file `schemas/graph.fbs:147`
                #[derive(
                    Clone,
                    Debug,
                    PartialEq,
                    PartialOrd,
                    Eq,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                pub struct MatmulOp {
                    /// The field `a` in the table `MatmulOp`
                    pub a: i64,
                    /// The field `b` in the table `MatmulOp`
                    pub b: i64,
                    /// The field `c` in the table `MatmulOp`
                    pub c: i64,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for MatmulOp {
                    fn default() -> Self {
                        Self { a: 0, b: 0, c: 0 }
                    }
                }

                impl MatmulOp {
                    /// Creates a [MatmulOpBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> MatmulOpBuilder<()> {
                        MatmulOpBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_a: impl ::planus::WriteAsDefault<i64, i64>,
                        field_b: impl ::planus::WriteAsDefault<i64, i64>,
                        field_c: impl ::planus::WriteAsDefault<i64, i64>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_a = field_a.prepare(builder, &0);
                        let prepared_b = field_b.prepare(builder, &0);
                        let prepared_c = field_c.prepare(builder, &0);

                        let mut table_writer: ::planus::table_writer::TableWriter<10> =
                            ::core::default::Default::default();
                        if prepared_a.is_some() {
                            table_writer.write_entry::<i64>(0);
                        }
                        if prepared_b.is_some() {
                            table_writer.write_entry::<i64>(1);
                        }
                        if prepared_c.is_some() {
                            table_writer.write_entry::<i64>(2);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_a) = prepared_a {
                                    object_writer.write::<_, _, 8>(&prepared_a);
                                }
                                if let ::core::option::Option::Some(prepared_b) = prepared_b {
                                    object_writer.write::<_, _, 8>(&prepared_b);
                                }
                                if let ::core::option::Option::Some(prepared_c) = prepared_c {
                                    object_writer.write::<_, _, 8>(&prepared_c);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<MatmulOp>> for MatmulOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<MatmulOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<MatmulOp>> for MatmulOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<MatmulOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<MatmulOp> for MatmulOp {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<MatmulOp> {
                        MatmulOp::create(builder, self.a, self.b, self.c)
                    }
                }

                /// Builder for serializing an instance of the [MatmulOp] type.
                ///
                /// Can be created using the [MatmulOp::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct MatmulOpBuilder<State>(State);

                impl MatmulOpBuilder<()> {
                    /// Setter for the [`a` field](MatmulOp#structfield.a).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn a<T0>(self, value: T0) -> MatmulOpBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<i64, i64>,
                    {
                        MatmulOpBuilder((value,))
                    }

                    /// Sets the [`a` field](MatmulOp#structfield.a) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn a_as_default(self) -> MatmulOpBuilder<(::planus::DefaultValue,)> {
                        self.a(::planus::DefaultValue)
                    }
                }

                impl<T0> MatmulOpBuilder<(T0,)> {
                    /// Setter for the [`b` field](MatmulOp#structfield.b).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn b<T1>(self, value: T1) -> MatmulOpBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0,) = self.0;
                        MatmulOpBuilder((v0, value))
                    }

                    /// Sets the [`b` field](MatmulOp#structfield.b) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn b_as_default(self) -> MatmulOpBuilder<(T0, ::planus::DefaultValue)> {
                        self.b(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> MatmulOpBuilder<(T0, T1)> {
                    /// Setter for the [`c` field](MatmulOp#structfield.c).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn c<T2>(self, value: T2) -> MatmulOpBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0, v1) = self.0;
                        MatmulOpBuilder((v0, v1, value))
                    }

                    /// Sets the [`c` field](MatmulOp#structfield.c) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn c_as_default(self) -> MatmulOpBuilder<(T0, T1, ::planus::DefaultValue)> {
                        self.c(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2> MatmulOpBuilder<(T0, T1, T2)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [MatmulOp].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<MatmulOp>
                    where
                        Self: ::planus::WriteAsOffset<MatmulOp>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAs<::planus::Offset<MatmulOp>>
                    for MatmulOpBuilder<(T0, T1, T2)>
                {
                    type Prepared = ::planus::Offset<MatmulOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<MatmulOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAsOptional<::planus::Offset<MatmulOp>>
                    for MatmulOpBuilder<(T0, T1, T2)>
                {
                    type Prepared = ::planus::Offset<MatmulOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<MatmulOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAsOffset<MatmulOp> for MatmulOpBuilder<(T0, T1, T2)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<MatmulOp> {
                        let (v0, v1, v2) = &self.0;
                        MatmulOp::create(builder, v0, v1, v2)
                    }
                }

                /// Reference to a deserialized [MatmulOp].
                #[derive(Copy, Clone)]
                pub struct MatmulOpRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> MatmulOpRef<'a> {
                    /// Getter for the [`a` field](MatmulOp#structfield.a).
                    #[inline]
                    pub fn a(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(0, "MatmulOp", "a")?.unwrap_or(0))
                    }

                    /// Getter for the [`b` field](MatmulOp#structfield.b).
                    #[inline]
                    pub fn b(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(1, "MatmulOp", "b")?.unwrap_or(0))
                    }

                    /// Getter for the [`c` field](MatmulOp#structfield.c).
                    #[inline]
                    pub fn c(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(2, "MatmulOp", "c")?.unwrap_or(0))
                    }
                }

                impl<'a> ::core::fmt::Debug for MatmulOpRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("MatmulOpRef");
                        f.field("a", &self.a());
                        f.field("b", &self.b());
                        f.field("c", &self.c());
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<MatmulOpRef<'a>> for MatmulOp {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: MatmulOpRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            a: ::core::convert::TryInto::try_into(value.a()?)?,
                            b: ::core::convert::TryInto::try_into(value.b()?)?,
                            c: ::core::convert::TryInto::try_into(value.c()?)?,
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for MatmulOpRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for MatmulOpRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[MatmulOpRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<MatmulOp>> for MatmulOp {
                    type Value = ::planus::Offset<MatmulOp>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<MatmulOp>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for MatmulOpRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[MatmulOpRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  `y = mode(x)` over the dims where `y` has size 1.
                ///
                /// Generated from these locations:
                /// * Table `ReductionOp` in the file `schemas/graph.fbs:154`
                #[derive(
                    Clone,
                    Debug,
                    PartialEq,
                    PartialOrd,
                    Eq,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                pub struct ReductionOp {
                    /// The field `mode` in the table `ReductionOp`
                    pub mode: self::ReductionMode,
                    /// The field `x` in the table `ReductionOp`
                    pub x: i64,
                    /// The field `y` in the table `ReductionOp`
                    pub y: i64,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for ReductionOp {
                    fn default() -> Self {
                        Self {
                            mode: self::ReductionMode::Sum,
                            x: 0,
                            y: 0,
                        }
                    }
                }

                impl ReductionOp {
                    /// Creates a [ReductionOpBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> ReductionOpBuilder<()> {
                        ReductionOpBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_mode: impl ::planus::WriteAsDefault<
                            self::ReductionMode,
                            self::ReductionMode,
                        >,
                        field_x: impl ::planus::WriteAsDefault<i64, i64>,
                        field_y: impl ::planus::WriteAsDefault<i64, i64>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_mode = field_mode.prepare(builder, &self::ReductionMode::Sum);
                        let prepared_x = field_x.prepare(builder, &0);
                        let prepared_y = field_y.prepare(builder, &0);

                        let mut table_writer: ::planus::table_writer::TableWriter<10> =
                            ::core::default::Default::default();
                        if prepared_x.is_some() {
                            table_writer.write_entry::<i64>(1);
                        }
                        if prepared_y.is_some() {
                            table_writer.write_entry::<i64>(2);
                        }
                        if prepared_mode.is_some() {
                            table_writer.write_entry::<self::ReductionMode>(0);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_x) = prepared_x {
                                    object_writer.write::<_, _, 8>(&prepared_x);
                                }
                                if let ::core::option::Option::Some(prepared_y) = prepared_y {
                                    object_writer.write::<_, _, 8>(&prepared_y);
                                }
                                if let ::core::option::Option::Some(prepared_mode) = prepared_mode {
                                    object_writer.write::<_, _, 1>(&prepared_mode);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<ReductionOp>> for ReductionOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<ReductionOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<ReductionOp>> for ReductionOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<ReductionOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<ReductionOp> for ReductionOp {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<ReductionOp> {
                        ReductionOp::create(builder, self.mode, self.x, self.y)
                    }
                }

                /// Builder for serializing an instance of the [ReductionOp] type.
                ///
                /// Can be created using the [ReductionOp::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct ReductionOpBuilder<State>(State);

                impl ReductionOpBuilder<()> {
                    /// Setter for the [`mode` field](ReductionOp#structfield.mode).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn mode<T0>(self, value: T0) -> ReductionOpBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<self::ReductionMode, self::ReductionMode>,
                    {
                        ReductionOpBuilder((value,))
                    }

                    /// Sets the [`mode` field](ReductionOp#structfield.mode) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn mode_as_default(self) -> ReductionOpBuilder<(::planus::DefaultValue,)> {
                        self.mode(::planus::DefaultValue)
                    }
                }

                impl<T0> ReductionOpBuilder<(T0,)> {
                    /// Setter for the [`x` field](ReductionOp#structfield.x).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn x<T1>(self, value: T1) -> ReductionOpBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0,) = self.0;
                        ReductionOpBuilder((v0, value))
                    }

                    /// Sets the [`x` field](ReductionOp#structfield.x) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn x_as_default(self) -> ReductionOpBuilder<(T0, ::planus::DefaultValue)> {
                        self.x(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> ReductionOpBuilder<(T0, T1)> {
                    /// Setter for the [`y` field](ReductionOp#structfield.y).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn y<T2>(self, value: T2) -> ReductionOpBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0, v1) = self.0;
                        ReductionOpBuilder((v0, v1, value))
                    }

                    /// Sets the [`y` field](ReductionOp#structfield.y) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn y_as_default(
                        self,
                    ) -> ReductionOpBuilder<(T0, T1, ::planus::DefaultValue)> {
                        self.y(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2> ReductionOpBuilder<(T0, T1, T2)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [ReductionOp].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<ReductionOp>
                    where
                        Self: ::planus::WriteAsOffset<ReductionOp>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::ReductionMode, self::ReductionMode>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAs<::planus::Offset<ReductionOp>>
                    for ReductionOpBuilder<(T0, T1, T2)>
                {
                    type Prepared = ::planus::Offset<ReductionOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<ReductionOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::ReductionMode, self::ReductionMode>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAsOptional<::planus::Offset<ReductionOp>>
                    for ReductionOpBuilder<(T0, T1, T2)>
                {
                    type Prepared = ::planus::Offset<ReductionOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<ReductionOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<self::ReductionMode, self::ReductionMode>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                        T2: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAsOffset<ReductionOp> for ReductionOpBuilder<(T0, T1, T2)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<ReductionOp> {
                        let (v0, v1, v2) = &self.0;
                        ReductionOp::create(builder, v0, v1, v2)
                    }
                }

                /// Reference to a deserialized [ReductionOp].
                #[derive(Copy, Clone)]
                pub struct ReductionOpRef<'a>(
                    #[allow(dead_code)] ::planus::table_reader::Table<'a>,
                );

                impl<'a> ReductionOpRef<'a> {
                    /// Getter for the [`mode` field](ReductionOp#structfield.mode).
                    #[inline]
                    pub fn mode(&self) -> ::planus::Result<self::ReductionMode> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(0, "ReductionOp", "mode")?
                                .unwrap_or(self::ReductionMode::Sum),
                        )
                    }

                    /// Getter for the [`x` field](ReductionOp#structfield.x).
                    #[inline]
                    pub fn x(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(
                            self.0.access(1, "ReductionOp", "x")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`y` field](ReductionOp#structfield.y).
                    #[inline]
                    pub fn y(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(
                            self.0.access(2, "ReductionOp", "y")?.unwrap_or(0),
                        )
                    }
                }

                impl<'a> ::core::fmt::Debug for ReductionOpRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("ReductionOpRef");
                        f.field("mode", &self.mode());
                        f.field("x", &self.x());
                        f.field("y", &self.y());
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<ReductionOpRef<'a>> for ReductionOp {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: ReductionOpRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            mode: ::core::convert::TryInto::try_into(value.mode()?)?,
                            x: ::core::convert::TryInto::try_into(value.x()?)?,
                            y: ::core::convert::TryInto::try_into(value.y()?)?,
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for ReductionOpRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for ReductionOpRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[ReductionOpRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<ReductionOp>> for ReductionOp {
                    type Value = ::planus::Offset<ReductionOp>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<ReductionOp>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for ReductionOpRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[ReductionOpRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  The type of an `Attribute`'s value: which of its value fields holds it.
                ///
                /// Generated from these locations:
                /// * Enum `AttributeType` in the file `schemas/graph.fbs:161`
                #[derive(
                    Copy,
                    Clone,
                    Debug,
                    PartialEq,
                    Eq,
                    PartialOrd,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                #[repr(u8)]
                pub enum AttributeType {
                    /// The variant `Bool` in the enum `AttributeType`
                    Bool = 0,

                    /// The variant `Int` in the enum `AttributeType`
                    Int = 1,

                    /// The variant `Float` in the enum `AttributeType`
                    Float = 2,

                    /// The variant `Ints` in the enum `AttributeType`
                    Ints = 3,

                    /// The variant `Floats` in the enum `AttributeType`
                    Floats = 4,

                    /// The variant `Str` in the enum `AttributeType`
                    Str = 5,
                }

                impl AttributeType {
                    /// Array containing all valid variants of AttributeType
                    pub const ENUM_VALUES: [Self; 6] = [
                        Self::Bool,
                        Self::Int,
                        Self::Float,
                        Self::Ints,
                        Self::Floats,
                        Self::Str,
                    ];
                }

                impl ::core::convert::TryFrom<u8> for AttributeType {
                    type Error = ::planus::errors::UnknownEnumTagKind;
                    #[inline]
                    fn try_from(
                        value: u8,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTagKind>
                    {
                        #[allow(clippy::match_single_binding)]
                        match value {
                            0 => ::core::result::Result::Ok(AttributeType::Bool),
                            1 => ::core::result::Result::Ok(AttributeType::Int),
                            2 => ::core::result::Result::Ok(AttributeType::Float),
                            3 => ::core::result::Result::Ok(AttributeType::Ints),
                            4 => ::core::result::Result::Ok(AttributeType::Floats),
                            5 => ::core::result::Result::Ok(AttributeType::Str),

                            _ => {
                                ::core::result::Result::Err(::planus::errors::UnknownEnumTagKind {
                                    tag: value as i128,
                                })
                            }
                        }
                    }
                }

                impl ::core::convert::From<AttributeType> for u8 {
                    #[inline]
                    fn from(value: AttributeType) -> Self {
                        value as u8
                    }
                }

                /// # Safety
                /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
                unsafe impl ::planus::Primitive for AttributeType {
                    const ALIGNMENT: usize = 1;
                    const SIZE: usize = 1;
                }

                impl ::planus::WriteAsPrimitive<AttributeType> for AttributeType {
                    #[inline]
                    fn write<const N: usize>(
                        &self,
                        cursor: ::planus::Cursor<'_, N>,
                        buffer_position: u32,
                    ) {
                        (*self as u8).write(cursor, buffer_position);
                    }
                }

                impl ::planus::WriteAs<AttributeType> for AttributeType {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> AttributeType {
                        *self
                    }
                }

                impl ::planus::WriteAsDefault<AttributeType, AttributeType> for AttributeType {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                        default: &AttributeType,
                    ) -> ::core::option::Option<AttributeType> {
                        if self == default {
                            ::core::option::Option::None
                        } else {
                            ::core::option::Option::Some(*self)
                        }
                    }
                }

                impl ::planus::WriteAsOptional<AttributeType> for AttributeType {
                    type Prepared = Self;

                    #[inline]
                    fn prepare(
                        &self,
                        _builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<AttributeType> {
                        ::core::option::Option::Some(*self)
                    }
                }

                impl<'buf> ::planus::TableRead<'buf> for AttributeType {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        let n: u8 = ::planus::TableRead::from_buffer(buffer, offset)?;
                        ::core::result::Result::Ok(::core::convert::TryInto::try_into(n)?)
                    }
                }

                impl<'buf> ::planus::VectorReadInner<'buf> for AttributeType {
                    type Error = ::planus::errors::UnknownEnumTag;
                    const STRIDE: usize = 1;
                    #[inline]
                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'buf>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTag>
                    {
                        let value = unsafe { *buffer.buffer.get_unchecked(offset) };
                        let value: ::core::result::Result<Self, _> =
                            ::core::convert::TryInto::try_into(value);
                        value.map_err(|error_kind| {
                            error_kind.with_error_location(
                                "AttributeType",
                                "VectorRead::from_buffer",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<AttributeType> for AttributeType {
                    const STRIDE: usize = 1;

                    type Value = Self;

                    #[inline]
                    fn prepare(&self, _builder: &mut ::planus::Builder) -> Self {
                        *self
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[Self],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 1];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - i as u32,
                            );
                        }
                    }
                }

                ///  One typed attribute of a `GenericOp`; only the field of its `type` is written.
                ///
                /// Generated from these locations:
                /// * Table `Attribute` in the file `schemas/graph.fbs:171`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct Attribute {
                    /// The field `name` in the table `Attribute`
                    pub name: ::planus::alloc::string::String,
                    /// The field `type` in the table `Attribute`
                    pub type_: self::AttributeType,
                    /// The field `bool_value` in the table `Attribute`
                    pub bool_value: bool,
                    /// The field `int_value` in the table `Attribute`
                    pub int_value: i64,
                    /// The field `float_value` in the table `Attribute`
                    pub float_value: f64,
                    /// The field `ints_value` in the table `Attribute`
                    pub ints_value: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    /// The field `floats_value` in the table `Attribute`
                    pub floats_value: ::core::option::Option<::planus::alloc::vec::Vec<f64>>,
                    /// The field `str_value` in the table `Attribute`
                    pub str_value: ::core::option::Option<::planus::alloc::string::String>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for Attribute {
                    fn default() -> Self {
                        Self {
                            name: ::core::default::Default::default(),
                            type_: self::AttributeType::Bool,
                            bool_value: false,
                            int_value: 0,
                            float_value: 0.0,
                            ints_value: ::core::default::Default::default(),
                            floats_value: ::core::default::Default::default(),
                            str_value: ::core::default::Default::default(),
                        }
                    }
                }

                impl Attribute {
                    /// Creates a [AttributeBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> AttributeBuilder<()> {
                        AttributeBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_name: impl ::planus::WriteAs<::planus::Offset<str>>,
                        field_type_: impl ::planus::WriteAsDefault<
                            self::AttributeType,
                            self::AttributeType,
                        >,
                        field_bool_value: impl ::planus::WriteAsDefault<bool, bool>,
                        field_int_value: impl ::planus::WriteAsDefault<i64, i64>,
                        field_float_value: impl ::planus::WriteAsDefault<f64, f64>,
                        field_ints_value: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_floats_value: impl ::planus::WriteAsOptional<::planus::Offset<[f64]>>,
                        field_str_value: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                    ) -> ::planus::Offset<Self> {
                        let prepared_name = field_name.prepare(builder);
                        let prepared_type_ =
                            field_type_.prepare(builder, &self::AttributeType::Bool);
                        let prepared_bool_value = field_bool_value.prepare(builder, &false);
                        let prepared_int_value = field_int_value.prepare(builder, &0);
                        let prepared_float_value = field_float_value.prepare(builder, &0.0);
                        let prepared_ints_value = field_ints_value.prepare(builder);
                        let prepared_floats_value = field_floats_value.prepare(builder);
                        let prepared_str_value = field_str_value.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<20> =
                            ::core::default::Default::default();
                        if prepared_int_value.is_some() {
                            table_writer.write_entry::<i64>(3);
                        }
                        if prepared_float_value.is_some() {
                            table_writer.write_entry::<f64>(4);
                        }
                        table_writer.write_entry::<::planus::Offset<str>>(0);
                        if prepared_ints_value.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(5);
                        }
                        if prepared_floats_value.is_some() {
                            table_writer.write_entry::<::planus::Offset<[f64]>>(6);
                        }
                        if prepared_str_value.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(7);
                        }
                        if prepared_type_.is_some() {
                            table_writer.write_entry::<self::AttributeType>(1);
                        }
                        if prepared_bool_value.is_some() {
                            table_writer.write_entry::<bool>(2);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_int_value) =
                                    prepared_int_value
                                {
                                    object_writer.write::<_, _, 8>(&prepared_int_value);
                                }
                                if let ::core::option::Option::Some(prepared_float_value) =
                                    prepared_float_value
                                {
                                    object_writer.write::<_, _, 8>(&prepared_float_value);
                                }
                                object_writer.write::<_, _, 4>(&prepared_name);
                                if let ::core::option::Option::Some(prepared_ints_value) =
                                    prepared_ints_value
                                {
                                    object_writer.write::<_, _, 4>(&prepared_ints_value);
                                }
                                if let ::core::option::Option::Some(prepared_floats_value) =
                                    prepared_floats_value
                                {
                                    object_writer.write::<_, _, 4>(&prepared_floats_value);
                                }
                                if let ::core::option::Option::Some(prepared_str_value) =
                                    prepared_str_value
                                {
                                    object_writer.write::<_, _, 4>(&prepared_str_value);
                                }
                                if let ::core::option::Option::Some(prepared_type_) = prepared_type_
                                {
                                    object_writer.write::<_, _, 1>(&prepared_type_);
                                }
                                if let ::core::option::Option::Some(prepared_bool_value) =
                                    prepared_bool_value
                                {
                                    object_writer.write::<_, _, 1>(&prepared_bool_value);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<Attribute>> for Attribute {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Attribute> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<Attribute>> for Attribute {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Attribute>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<Attribute> for Attribute {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Attribute> {
                        Attribute::create(
                            builder,
                            &self.name,
                            self.type_,
                            self.bool_value,
                            self.int_value,
                            self.float_value,
                            &self.ints_value,
                            &self.floats_value,
                            &self.str_value,
                        )
                    }
                }

                /// Builder for serializing an instance of the [Attribute] type.
                ///
                /// Can be created using the [Attribute::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct AttributeBuilder<State>(State);

                impl AttributeBuilder<()> {
                    /// Setter for the [`name` field](Attribute#structfield.name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name<T0>(self, value: T0) -> AttributeBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                    {
                        AttributeBuilder((value,))
                    }
                }

                impl<T0> AttributeBuilder<(T0,)> {
                    /// Setter for the [`type` field](Attribute#structfield.type_).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn type_<T1>(self, value: T1) -> AttributeBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<self::AttributeType, self::AttributeType>,
                    {
                        let (v0,) = self.0;
                        AttributeBuilder((v0, value))
                    }

                    /// Sets the [`type` field](Attribute#structfield.type_) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn type_as_default(self) -> AttributeBuilder<(T0, ::planus::DefaultValue)> {
                        self.type_(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> AttributeBuilder<(T0, T1)> {
                    /// Setter for the [`bool_value` field](Attribute#structfield.bool_value).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn bool_value<T2>(self, value: T2) -> AttributeBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsDefault<bool, bool>,
                    {
                        let (v0, v1) = self.0;
                        AttributeBuilder((v0, v1, value))
                    }

                    /// Sets the [`bool_value` field](Attribute#structfield.bool_value) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn bool_value_as_default(
                        self,
                    ) -> AttributeBuilder<(T0, T1, ::planus::DefaultValue)> {
                        self.bool_value(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2> AttributeBuilder<(T0, T1, T2)> {
                    /// Setter for the [`int_value` field](Attribute#structfield.int_value).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn int_value<T3>(self, value: T3) -> AttributeBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0, v1, v2) = self.0;
                        AttributeBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`int_value` field](Attribute#structfield.int_value) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn int_value_as_default(
                        self,
                    ) -> AttributeBuilder<(T0, T1, T2, ::planus::DefaultValue)>
                    {
                        self.int_value(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3> AttributeBuilder<(T0, T1, T2, T3)> {
                    /// Setter for the [`float_value` field](Attribute#structfield.float_value).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn float_value<T4>(
                        self,
                        value: T4,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, T4)>
                    where
                        T4: ::planus::WriteAsDefault<f64, f64>,
                    {
                        let (v0, v1, v2, v3) = self.0;
                        AttributeBuilder((v0, v1, v2, v3, value))
                    }

                    /// Sets the [`float_value` field](Attribute#structfield.float_value) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn float_value_as_default(
                        self,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, ::planus::DefaultValue)>
                    {
                        self.float_value(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3, T4> AttributeBuilder<(T0, T1, T2, T3, T4)> {
                    /// Setter for the [`ints_value` field](Attribute#structfield.ints_value).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn ints_value<T5>(
                        self,
                        value: T5,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, T4, T5)>
                    where
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2, v3, v4) = self.0;
                        AttributeBuilder((v0, v1, v2, v3, v4, value))
                    }

                    /// Sets the [`ints_value` field](Attribute#structfield.ints_value) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn ints_value_as_null(self) -> AttributeBuilder<(T0, T1, T2, T3, T4, ())> {
                        self.ints_value(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5> AttributeBuilder<(T0, T1, T2, T3, T4, T5)> {
                    /// Setter for the [`floats_value` field](Attribute#structfield.floats_value).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn floats_value<T6>(
                        self,
                        value: T6,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                    where
                        T6: ::planus::WriteAsOptional<::planus::Offset<[f64]>>,
                    {
                        let (v0, v1, v2, v3, v4, v5) = self.0;
                        AttributeBuilder((v0, v1, v2, v3, v4, v5, value))
                    }

                    /// Sets the [`floats_value` field](Attribute#structfield.floats_value) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn floats_value_as_null(
                        self,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, T4, T5, ())> {
                        self.floats_value(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6> AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                    /// Setter for the [`str_value` field](Attribute#structfield.str_value).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn str_value<T7>(
                        self,
                        value: T7,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                    where
                        T7: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        let (v0, v1, v2, v3, v4, v5, v6) = self.0;
                        AttributeBuilder((v0, v1, v2, v3, v4, v5, v6, value))
                    }

                    /// Sets the [`str_value` field](Attribute#structfield.str_value) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn str_value_as_null(
                        self,
                    ) -> AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6, ())> {
                        self.str_value(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6, T7> AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Attribute].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Attribute>
                    where
                        Self: ::planus::WriteAsOffset<Attribute>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsDefault<self::AttributeType, self::AttributeType>,
                        T2: ::planus::WriteAsDefault<bool, bool>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsDefault<f64, f64>,
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[f64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    > ::planus::WriteAs<::planus::Offset<Attribute>>
                    for AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    type Prepared = ::planus::Offset<Attribute>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Attribute> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsDefault<self::AttributeType, self::AttributeType>,
                        T2: ::planus::WriteAsDefault<bool, bool>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsDefault<f64, f64>,
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[f64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    > ::planus::WriteAsOptional<::planus::Offset<Attribute>>
                    for AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    type Prepared = ::planus::Offset<Attribute>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Attribute>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsDefault<self::AttributeType, self::AttributeType>,
                        T2: ::planus::WriteAsDefault<bool, bool>,
                        T3: ::planus::WriteAsDefault<i64, i64>,
                        T4: ::planus::WriteAsDefault<f64, f64>,
                        T5: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[f64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    > ::planus::WriteAsOffset<Attribute>
                    for AttributeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Attribute> {
                        let (v0, v1, v2, v3, v4, v5, v6, v7) = &self.0;
                        Attribute::create(builder, v0, v1, v2, v3, v4, v5, v6, v7)
                    }
                }

                /// Reference to a deserialized [Attribute].
                #[derive(Copy, Clone)]
                pub struct AttributeRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> AttributeRef<'a> {
                    /// Getter for the [`name` field](Attribute#structfield.name).
                    #[inline]
                    pub fn name(&self) -> ::planus::Result<&'a ::core::primitive::str> {
                        self.0.access_required(0, "Attribute", "name")
                    }

                    /// Getter for the [`type` field](Attribute#structfield.type_).
                    #[inline]
                    pub fn type_(&self) -> ::planus::Result<self::AttributeType> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(1, "Attribute", "type_")?
                                .unwrap_or(self::AttributeType::Bool),
                        )
                    }

                    /// Getter for the [`bool_value` field](Attribute#structfield.bool_value).
                    #[inline]
                    pub fn bool_value(&self) -> ::planus::Result<bool> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(2, "Attribute", "bool_value")?
                                .unwrap_or(false),
                        )
                    }

                    /// Getter for the [`int_value` field](Attribute#structfield.int_value).
                    #[inline]
                    pub fn int_value(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(
                            self.0.access(3, "Attribute", "int_value")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`float_value` field](Attribute#structfield.float_value).
                    #[inline]
                    pub fn float_value(&self) -> ::planus::Result<f64> {
                        ::core::result::Result::Ok(
                            self.0.access(4, "Attribute", "float_value")?.unwrap_or(0.0),
                        )
                    }

                    /// Getter for the [`ints_value` field](Attribute#structfield.ints_value).
                    #[inline]
                    pub fn ints_value(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(5, "Attribute", "ints_value")
                    }

                    /// Getter for the [`floats_value` field](Attribute#structfield.floats_value).
                    #[inline]
                    pub fn floats_value(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, f64>>>
                    {
                        self.0.access(6, "Attribute", "floats_value")
                    }

                    /// Getter for the [`str_value` field](Attribute#structfield.str_value).
                    #[inline]
                    pub fn str_value(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(7, "Attribute", "str_value")
                    }
                }

                impl<'a> ::core::fmt::Debug for AttributeRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("AttributeRef");
                        f.field("name", &self.name());
                        f.field("type_", &self.type_());
                        f.field("bool_value", &self.bool_value());
                        f.field("int_value", &self.int_value());
                        f.field("float_value", &self.float_value());
                        if let ::core::option::Option::Some(field_ints_value) =
                            self.ints_value().transpose()
                        {
                            f.field("ints_value", &field_ints_value);
                        }
                        if let ::core::option::Option::Some(field_floats_value) =
                            self.floats_value().transpose()
                        {
                            f.field("floats_value", &field_floats_value);
                        }
                        if let ::core::option::Option::Some(field_str_value) =
                            self.str_value().transpose()
                        {
                            f.field("str_value", &field_str_value);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<AttributeRef<'a>> for Attribute {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: AttributeRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            name: ::core::convert::Into::into(value.name()?),
                            type_: ::core::convert::TryInto::try_into(value.type_()?)?,
                            bool_value: ::core::convert::TryInto::try_into(value.bool_value()?)?,
                            int_value: ::core::convert::TryInto::try_into(value.int_value()?)?,
                            float_value: ::core::convert::TryInto::try_into(value.float_value()?)?,
                            ints_value: if let ::core::option::Option::Some(ints_value) =
                                value.ints_value()?
                            {
                                ::core::option::Option::Some(ints_value.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            floats_value: if let ::core::option::Option::Some(floats_value) =
                                value.floats_value()?
                            {
                                ::core::option::Option::Some(floats_value.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            str_value: value.str_value()?.map(::core::convert::Into::into),
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for AttributeRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for AttributeRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[AttributeRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<Attribute>> for Attribute {
                    type Value = ::planus::Offset<Attribute>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<Attribute>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for AttributeRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[AttributeRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  A named port of a `GenericOp` and the tensor bound to it.
                ///
                /// Generated from these locations:
                /// * Table `Port` in the file `schemas/graph.fbs:183`
                #[derive(
                    Clone,
                    Debug,
                    PartialEq,
                    PartialOrd,
                    Eq,
                    Ord,
                    Hash,
                    ::serde::Serialize,
                    ::serde::Deserialize,
                )]
                pub struct Port {
                    /// The field `name` in the table `Port`
                    pub name: ::planus::alloc::string::String,
                    /// The field `uid` in the table `Port`
                    pub uid: i64,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for Port {
                    fn default() -> Self {
                        Self {
                            name: ::core::default::Default::default(),
                            uid: 0,
                        }
                    }
                }

                impl Port {
                    /// Creates a [PortBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> PortBuilder<()> {
                        PortBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_name: impl ::planus::WriteAs<::planus::Offset<str>>,
                        field_uid: impl ::planus::WriteAsDefault<i64, i64>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_name = field_name.prepare(builder);
                        let prepared_uid = field_uid.prepare(builder, &0);

                        let mut table_writer: ::planus::table_writer::TableWriter<8> =
                            ::core::default::Default::default();
                        if prepared_uid.is_some() {
                            table_writer.write_entry::<i64>(1);
                        }
                        table_writer.write_entry::<::planus::Offset<str>>(0);

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_uid) = prepared_uid {
                                    object_writer.write::<_, _, 8>(&prepared_uid);
                                }
                                object_writer.write::<_, _, 4>(&prepared_name);
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<Port>> for Port {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Port> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<Port>> for Port {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Port>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<Port> for Port {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Port> {
                        Port::create(builder, &self.name, self.uid)
                    }
                }

                /// Builder for serializing an instance of the [Port] type.
                ///
                /// Can be created using the [Port::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct PortBuilder<State>(State);

                impl PortBuilder<()> {
                    /// Setter for the [`name` field](Port#structfield.name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name<T0>(self, value: T0) -> PortBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                    {
                        PortBuilder((value,))
                    }
                }

                impl<T0> PortBuilder<(T0,)> {
                    /// Setter for the [`uid` field](Port#structfield.uid).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn uid<T1>(self, value: T1) -> PortBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    {
                        let (v0,) = self.0;
                        PortBuilder((v0, value))
                    }

                    /// Sets the [`uid` field](Port#structfield.uid) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn uid_as_default(self) -> PortBuilder<(T0, ::planus::DefaultValue)> {
                        self.uid(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> PortBuilder<(T0, T1)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Port].
                    #[inline]
                    pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<Port>
                    where
                        Self: ::planus::WriteAsOffset<Port>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAs<::planus::Offset<Port>> for PortBuilder<(T0, T1)>
                {
                    type Prepared = ::planus::Offset<Port>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Port> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAsOptional<::planus::Offset<Port>> for PortBuilder<(T0, T1)>
                {
                    type Prepared = ::planus::Offset<Port>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Port>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsDefault<i64, i64>,
                    > ::planus::WriteAsOffset<Port> for PortBuilder<(T0, T1)>
                {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Port> {
                        let (v0, v1) = &self.0;
                        Port::create(builder, v0, v1)
                    }
                }

                /// Reference to a deserialized [Port].
                #[derive(Copy, Clone)]
                pub struct PortRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> PortRef<'a> {
                    /// Getter for the [`name` field](Port#structfield.name).
                    #[inline]
                    pub fn name(&self) -> ::planus::Result<&'a ::core::primitive::str> {
                        self.0.access_required(0, "Port", "name")
                    }

                    /// Getter for the [`uid` field](Port#structfield.uid).
                    #[inline]
                    pub fn uid(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(self.0.access(1, "Port", "uid")?.unwrap_or(0))
                    }
                }

                impl<'a> ::core::fmt::Debug for PortRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("PortRef");
                        f.field("name", &self.name());
                        f.field("uid", &self.uid());
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<PortRef<'a>> for Port {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: PortRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            name: ::core::convert::Into::into(value.name()?),
                            uid: ::core::convert::TryInto::try_into(value.uid()?)?,
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for PortRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for PortRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[PortRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<Port>> for Port {
                    type Value = ::planus::Offset<Port>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<Port>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for PortRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[PortRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  Graph minor version 1: any operation after the first four, by its registered name, with
                ///  named input and output ports (absent optional ports left out) and typed attributes. Ports and
                ///  attributes are sorted by name.
                ///
                /// Generated from these locations:
                /// * Table `GenericOp` in the file `schemas/graph.fbs:191`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct GenericOp {
                    /// The field `op` in the table `GenericOp`
                    pub op: ::planus::alloc::string::String,
                    /// The field `inputs` in the table `GenericOp`
                    pub inputs: ::core::option::Option<::planus::alloc::vec::Vec<self::Port>>,
                    /// The field `outputs` in the table `GenericOp`
                    pub outputs: ::core::option::Option<::planus::alloc::vec::Vec<self::Port>>,
                    /// The field `attributes` in the table `GenericOp`
                    pub attributes:
                        ::core::option::Option<::planus::alloc::vec::Vec<self::Attribute>>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for GenericOp {
                    fn default() -> Self {
                        Self {
                            op: ::core::default::Default::default(),
                            inputs: ::core::default::Default::default(),
                            outputs: ::core::default::Default::default(),
                            attributes: ::core::default::Default::default(),
                        }
                    }
                }

                impl GenericOp {
                    /// Creates a [GenericOpBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> GenericOpBuilder<()> {
                        GenericOpBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_op: impl ::planus::WriteAs<::planus::Offset<str>>,
                        field_inputs: impl ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Port>]>,
                        >,
                        field_outputs: impl ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Port>]>,
                        >,
                        field_attributes: impl ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Attribute>]>,
                        >,
                    ) -> ::planus::Offset<Self> {
                        let prepared_op = field_op.prepare(builder);
                        let prepared_inputs = field_inputs.prepare(builder);
                        let prepared_outputs = field_outputs.prepare(builder);
                        let prepared_attributes = field_attributes.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<12> =
                            ::core::default::Default::default();
                        table_writer.write_entry::<::planus::Offset<str>>(0);
                        if prepared_inputs.is_some() {
                            table_writer
                                .write_entry::<::planus::Offset<[::planus::Offset<self::Port>]>>(1);
                        }
                        if prepared_outputs.is_some() {
                            table_writer
                                .write_entry::<::planus::Offset<[::planus::Offset<self::Port>]>>(2);
                        }
                        if prepared_attributes.is_some() {
                            table_writer.write_entry::<::planus::Offset<[::planus::Offset<self::Attribute>]>>(3);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                object_writer.write::<_, _, 4>(&prepared_op);
                                if let ::core::option::Option::Some(prepared_inputs) =
                                    prepared_inputs
                                {
                                    object_writer.write::<_, _, 4>(&prepared_inputs);
                                }
                                if let ::core::option::Option::Some(prepared_outputs) =
                                    prepared_outputs
                                {
                                    object_writer.write::<_, _, 4>(&prepared_outputs);
                                }
                                if let ::core::option::Option::Some(prepared_attributes) =
                                    prepared_attributes
                                {
                                    object_writer.write::<_, _, 4>(&prepared_attributes);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<GenericOp>> for GenericOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<GenericOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<GenericOp>> for GenericOp {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<GenericOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<GenericOp> for GenericOp {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<GenericOp> {
                        GenericOp::create(
                            builder,
                            &self.op,
                            &self.inputs,
                            &self.outputs,
                            &self.attributes,
                        )
                    }
                }

                /// Builder for serializing an instance of the [GenericOp] type.
                ///
                /// Can be created using the [GenericOp::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct GenericOpBuilder<State>(State);

                impl GenericOpBuilder<()> {
                    /// Setter for the [`op` field](GenericOp#structfield.op).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn op<T0>(self, value: T0) -> GenericOpBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                    {
                        GenericOpBuilder((value,))
                    }
                }

                impl<T0> GenericOpBuilder<(T0,)> {
                    /// Setter for the [`inputs` field](GenericOp#structfield.inputs).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn inputs<T1>(self, value: T1) -> GenericOpBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Port>]>,
                        >,
                    {
                        let (v0,) = self.0;
                        GenericOpBuilder((v0, value))
                    }

                    /// Sets the [`inputs` field](GenericOp#structfield.inputs) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn inputs_as_null(self) -> GenericOpBuilder<(T0, ())> {
                        self.inputs(())
                    }
                }

                impl<T0, T1> GenericOpBuilder<(T0, T1)> {
                    /// Setter for the [`outputs` field](GenericOp#structfield.outputs).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn outputs<T2>(self, value: T2) -> GenericOpBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Port>]>,
                        >,
                    {
                        let (v0, v1) = self.0;
                        GenericOpBuilder((v0, v1, value))
                    }

                    /// Sets the [`outputs` field](GenericOp#structfield.outputs) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn outputs_as_null(self) -> GenericOpBuilder<(T0, T1, ())> {
                        self.outputs(())
                    }
                }

                impl<T0, T1, T2> GenericOpBuilder<(T0, T1, T2)> {
                    /// Setter for the [`attributes` field](GenericOp#structfield.attributes).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn attributes<T3>(self, value: T3) -> GenericOpBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Attribute>]>,
                        >,
                    {
                        let (v0, v1, v2) = self.0;
                        GenericOpBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`attributes` field](GenericOp#structfield.attributes) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn attributes_as_null(self) -> GenericOpBuilder<(T0, T1, T2, ())> {
                        self.attributes(())
                    }
                }

                impl<T0, T1, T2, T3> GenericOpBuilder<(T0, T1, T2, T3)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [GenericOp].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<GenericOp>
                    where
                        Self: ::planus::WriteAsOffset<GenericOp>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Port>]>>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Port>]>>,
                        T3: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Attribute>]>,
                        >,
                    > ::planus::WriteAs<::planus::Offset<GenericOp>>
                    for GenericOpBuilder<(T0, T1, T2, T3)>
                {
                    type Prepared = ::planus::Offset<GenericOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<GenericOp> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Port>]>>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Port>]>>,
                        T3: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Attribute>]>,
                        >,
                    > ::planus::WriteAsOptional<::planus::Offset<GenericOp>>
                    for GenericOpBuilder<(T0, T1, T2, T3)>
                {
                    type Prepared = ::planus::Offset<GenericOp>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<GenericOp>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<str>>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Port>]>>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Port>]>>,
                        T3: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::Attribute>]>,
                        >,
                    > ::planus::WriteAsOffset<GenericOp> for GenericOpBuilder<(T0, T1, T2, T3)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<GenericOp> {
                        let (v0, v1, v2, v3) = &self.0;
                        GenericOp::create(builder, v0, v1, v2, v3)
                    }
                }

                /// Reference to a deserialized [GenericOp].
                #[derive(Copy, Clone)]
                pub struct GenericOpRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> GenericOpRef<'a> {
                    /// Getter for the [`op` field](GenericOp#structfield.op).
                    #[inline]
                    pub fn op(&self) -> ::planus::Result<&'a ::core::primitive::str> {
                        self.0.access_required(0, "GenericOp", "op")
                    }

                    /// Getter for the [`inputs` field](GenericOp#structfield.inputs).
                    #[inline]
                    pub fn inputs(
                        &self,
                    ) -> ::planus::Result<
                        ::core::option::Option<
                            ::planus::Vector<'a, ::planus::Result<self::PortRef<'a>>>,
                        >,
                    > {
                        self.0.access(1, "GenericOp", "inputs")
                    }

                    /// Getter for the [`outputs` field](GenericOp#structfield.outputs).
                    #[inline]
                    pub fn outputs(
                        &self,
                    ) -> ::planus::Result<
                        ::core::option::Option<
                            ::planus::Vector<'a, ::planus::Result<self::PortRef<'a>>>,
                        >,
                    > {
                        self.0.access(2, "GenericOp", "outputs")
                    }

                    /// Getter for the [`attributes` field](GenericOp#structfield.attributes).
                    #[inline]
                    pub fn attributes(
                        &self,
                    ) -> ::planus::Result<
                        ::core::option::Option<
                            ::planus::Vector<'a, ::planus::Result<self::AttributeRef<'a>>>,
                        >,
                    > {
                        self.0.access(3, "GenericOp", "attributes")
                    }
                }

                impl<'a> ::core::fmt::Debug for GenericOpRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("GenericOpRef");
                        f.field("op", &self.op());
                        if let ::core::option::Option::Some(field_inputs) =
                            self.inputs().transpose()
                        {
                            f.field("inputs", &field_inputs);
                        }
                        if let ::core::option::Option::Some(field_outputs) =
                            self.outputs().transpose()
                        {
                            f.field("outputs", &field_outputs);
                        }
                        if let ::core::option::Option::Some(field_attributes) =
                            self.attributes().transpose()
                        {
                            f.field("attributes", &field_attributes);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<GenericOpRef<'a>> for GenericOp {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: GenericOpRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            op: ::core::convert::Into::into(value.op()?),
                            inputs: if let ::core::option::Option::Some(inputs) = value.inputs()? {
                                ::core::option::Option::Some(inputs.to_vec_result()?)
                            } else {
                                ::core::option::Option::None
                            },
                            outputs: if let ::core::option::Option::Some(outputs) =
                                value.outputs()?
                            {
                                ::core::option::Option::Some(outputs.to_vec_result()?)
                            } else {
                                ::core::option::Option::None
                            },
                            attributes: if let ::core::option::Option::Some(attributes) =
                                value.attributes()?
                            {
                                ::core::option::Option::Some(attributes.to_vec_result()?)
                            } else {
                                ::core::option::Option::None
                            },
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for GenericOpRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for GenericOpRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[GenericOpRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<GenericOp>> for GenericOp {
                    type Value = ::planus::Offset<GenericOp>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<GenericOp>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for GenericOpRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[GenericOpRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  The operation of a node.
                ///
                /// Generated from these locations:
                /// * Union `Op` in the file `schemas/graph.fbs:199`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub enum Op {
                    /// The variant of type `PointwiseOp` in the union `Op`
                    PointwiseOp(::planus::alloc::boxed::Box<self::PointwiseOp>),

                    /// The variant of type `ConvOp` in the union `Op`
                    ConvOp(::planus::alloc::boxed::Box<self::ConvOp>),

                    /// The variant of type `MatmulOp` in the union `Op`
                    MatmulOp(::planus::alloc::boxed::Box<self::MatmulOp>),

                    /// The variant of type `ReductionOp` in the union `Op`
                    ReductionOp(::planus::alloc::boxed::Box<self::ReductionOp>),

                    /// The variant of type `GenericOp` in the union `Op`
                    GenericOp(::planus::alloc::boxed::Box<self::GenericOp>),
                }

                impl Op {
                    /// Creates a [OpBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> OpBuilder<::planus::Uninitialized> {
                        OpBuilder(::planus::Uninitialized)
                    }

                    #[inline]
                    pub fn create_pointwise_op(
                        builder: &mut ::planus::Builder,
                        value: impl ::planus::WriteAsOffset<self::PointwiseOp>,
                    ) -> ::planus::UnionOffset<Self> {
                        ::planus::UnionOffset::new(1, value.prepare(builder).downcast())
                    }

                    #[inline]
                    pub fn create_conv_op(
                        builder: &mut ::planus::Builder,
                        value: impl ::planus::WriteAsOffset<self::ConvOp>,
                    ) -> ::planus::UnionOffset<Self> {
                        ::planus::UnionOffset::new(2, value.prepare(builder).downcast())
                    }

                    #[inline]
                    pub fn create_matmul_op(
                        builder: &mut ::planus::Builder,
                        value: impl ::planus::WriteAsOffset<self::MatmulOp>,
                    ) -> ::planus::UnionOffset<Self> {
                        ::planus::UnionOffset::new(3, value.prepare(builder).downcast())
                    }

                    #[inline]
                    pub fn create_reduction_op(
                        builder: &mut ::planus::Builder,
                        value: impl ::planus::WriteAsOffset<self::ReductionOp>,
                    ) -> ::planus::UnionOffset<Self> {
                        ::planus::UnionOffset::new(4, value.prepare(builder).downcast())
                    }

                    #[inline]
                    pub fn create_generic_op(
                        builder: &mut ::planus::Builder,
                        value: impl ::planus::WriteAsOffset<self::GenericOp>,
                    ) -> ::planus::UnionOffset<Self> {
                        ::planus::UnionOffset::new(5, value.prepare(builder).downcast())
                    }
                }

                impl ::planus::WriteAsUnion<Op> for Op {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Self> {
                        match self {
                            Self::PointwiseOp(value) => Self::create_pointwise_op(builder, value),
                            Self::ConvOp(value) => Self::create_conv_op(builder, value),
                            Self::MatmulOp(value) => Self::create_matmul_op(builder, value),
                            Self::ReductionOp(value) => Self::create_reduction_op(builder, value),
                            Self::GenericOp(value) => Self::create_generic_op(builder, value),
                        }
                    }
                }

                impl ::planus::WriteAsOptionalUnion<Op> for Op {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::UnionOffset<Self>> {
                        ::core::option::Option::Some(::planus::WriteAsUnion::prepare(self, builder))
                    }
                }

                /// Builder for serializing an instance of the [Op] type.
                ///
                /// Can be created using the [Op::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct OpBuilder<T>(T);

                impl OpBuilder<::planus::Uninitialized> {
                    /// Creates an instance of the [`PointwiseOp` variant](Op#variant.PointwiseOp).
                    #[inline]
                    pub fn pointwise_op<T>(self, value: T) -> OpBuilder<::planus::Initialized<1, T>>
                    where
                        T: ::planus::WriteAsOffset<self::PointwiseOp>,
                    {
                        OpBuilder(::planus::Initialized(value))
                    }

                    /// Creates an instance of the [`ConvOp` variant](Op#variant.ConvOp).
                    #[inline]
                    pub fn conv_op<T>(self, value: T) -> OpBuilder<::planus::Initialized<2, T>>
                    where
                        T: ::planus::WriteAsOffset<self::ConvOp>,
                    {
                        OpBuilder(::planus::Initialized(value))
                    }

                    /// Creates an instance of the [`MatmulOp` variant](Op#variant.MatmulOp).
                    #[inline]
                    pub fn matmul_op<T>(self, value: T) -> OpBuilder<::planus::Initialized<3, T>>
                    where
                        T: ::planus::WriteAsOffset<self::MatmulOp>,
                    {
                        OpBuilder(::planus::Initialized(value))
                    }

                    /// Creates an instance of the [`ReductionOp` variant](Op#variant.ReductionOp).
                    #[inline]
                    pub fn reduction_op<T>(self, value: T) -> OpBuilder<::planus::Initialized<4, T>>
                    where
                        T: ::planus::WriteAsOffset<self::ReductionOp>,
                    {
                        OpBuilder(::planus::Initialized(value))
                    }

                    /// Creates an instance of the [`GenericOp` variant](Op#variant.GenericOp).
                    #[inline]
                    pub fn generic_op<T>(self, value: T) -> OpBuilder<::planus::Initialized<5, T>>
                    where
                        T: ::planus::WriteAsOffset<self::GenericOp>,
                    {
                        OpBuilder(::planus::Initialized(value))
                    }
                }

                impl<const N: u8, T> OpBuilder<::planus::Initialized<N, T>> {
                    /// Finish writing the builder to get an [UnionOffset](::planus::UnionOffset) to a serialized [Op].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Op>
                    where
                        Self: ::planus::WriteAsUnion<Op>,
                    {
                        ::planus::WriteAsUnion::prepare(&self, builder)
                    }
                }

                impl<T> ::planus::WriteAsUnion<Op> for OpBuilder<::planus::Initialized<1, T>>
                where
                    T: ::planus::WriteAsOffset<self::PointwiseOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Op> {
                        ::planus::UnionOffset::new(1, (self.0).0.prepare(builder).downcast())
                    }
                }

                impl<T> ::planus::WriteAsOptionalUnion<Op> for OpBuilder<::planus::Initialized<1, T>>
                where
                    T: ::planus::WriteAsOffset<self::PointwiseOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::UnionOffset<Op>> {
                        ::core::option::Option::Some(::planus::WriteAsUnion::prepare(self, builder))
                    }
                }
                impl<T> ::planus::WriteAsUnion<Op> for OpBuilder<::planus::Initialized<2, T>>
                where
                    T: ::planus::WriteAsOffset<self::ConvOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Op> {
                        ::planus::UnionOffset::new(2, (self.0).0.prepare(builder).downcast())
                    }
                }

                impl<T> ::planus::WriteAsOptionalUnion<Op> for OpBuilder<::planus::Initialized<2, T>>
                where
                    T: ::planus::WriteAsOffset<self::ConvOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::UnionOffset<Op>> {
                        ::core::option::Option::Some(::planus::WriteAsUnion::prepare(self, builder))
                    }
                }
                impl<T> ::planus::WriteAsUnion<Op> for OpBuilder<::planus::Initialized<3, T>>
                where
                    T: ::planus::WriteAsOffset<self::MatmulOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Op> {
                        ::planus::UnionOffset::new(3, (self.0).0.prepare(builder).downcast())
                    }
                }

                impl<T> ::planus::WriteAsOptionalUnion<Op> for OpBuilder<::planus::Initialized<3, T>>
                where
                    T: ::planus::WriteAsOffset<self::MatmulOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::UnionOffset<Op>> {
                        ::core::option::Option::Some(::planus::WriteAsUnion::prepare(self, builder))
                    }
                }
                impl<T> ::planus::WriteAsUnion<Op> for OpBuilder<::planus::Initialized<4, T>>
                where
                    T: ::planus::WriteAsOffset<self::ReductionOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Op> {
                        ::planus::UnionOffset::new(4, (self.0).0.prepare(builder).downcast())
                    }
                }

                impl<T> ::planus::WriteAsOptionalUnion<Op> for OpBuilder<::planus::Initialized<4, T>>
                where
                    T: ::planus::WriteAsOffset<self::ReductionOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::UnionOffset<Op>> {
                        ::core::option::Option::Some(::planus::WriteAsUnion::prepare(self, builder))
                    }
                }
                impl<T> ::planus::WriteAsUnion<Op> for OpBuilder<::planus::Initialized<5, T>>
                where
                    T: ::planus::WriteAsOffset<self::GenericOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::UnionOffset<Op> {
                        ::planus::UnionOffset::new(5, (self.0).0.prepare(builder).downcast())
                    }
                }

                impl<T> ::planus::WriteAsOptionalUnion<Op> for OpBuilder<::planus::Initialized<5, T>>
                where
                    T: ::planus::WriteAsOffset<self::GenericOp>,
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::UnionOffset<Op>> {
                        ::core::option::Option::Some(::planus::WriteAsUnion::prepare(self, builder))
                    }
                }

                /// Reference to a deserialized [Op].
                #[derive(Copy, Clone, Debug)]
                pub enum OpRef<'a> {
                    PointwiseOp(self::PointwiseOpRef<'a>),
                    ConvOp(self::ConvOpRef<'a>),
                    MatmulOp(self::MatmulOpRef<'a>),
                    ReductionOp(self::ReductionOpRef<'a>),
                    GenericOp(self::GenericOpRef<'a>),
                }

                impl<'a> ::core::convert::TryFrom<OpRef<'a>> for Op {
                    type Error = ::planus::Error;

                    fn try_from(value: OpRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(match value {
                            OpRef::PointwiseOp(value) => {
                                Self::PointwiseOp(::planus::alloc::boxed::Box::new(
                                    ::core::convert::TryFrom::try_from(value)?,
                                ))
                            }

                            OpRef::ConvOp(value) => Self::ConvOp(::planus::alloc::boxed::Box::new(
                                ::core::convert::TryFrom::try_from(value)?,
                            )),

                            OpRef::MatmulOp(value) => {
                                Self::MatmulOp(::planus::alloc::boxed::Box::new(
                                    ::core::convert::TryFrom::try_from(value)?,
                                ))
                            }

                            OpRef::ReductionOp(value) => {
                                Self::ReductionOp(::planus::alloc::boxed::Box::new(
                                    ::core::convert::TryFrom::try_from(value)?,
                                ))
                            }

                            OpRef::GenericOp(value) => {
                                Self::GenericOp(::planus::alloc::boxed::Box::new(
                                    ::core::convert::TryFrom::try_from(value)?,
                                ))
                            }
                        })
                    }
                }

                impl<'a> ::planus::TableReadUnion<'a> for OpRef<'a> {
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        tag: u8,
                        field_offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        match tag {
                            1 => ::core::result::Result::Ok(Self::PointwiseOp(
                                ::planus::TableRead::from_buffer(buffer, field_offset)?,
                            )),
                            2 => ::core::result::Result::Ok(Self::ConvOp(
                                ::planus::TableRead::from_buffer(buffer, field_offset)?,
                            )),
                            3 => ::core::result::Result::Ok(Self::MatmulOp(
                                ::planus::TableRead::from_buffer(buffer, field_offset)?,
                            )),
                            4 => ::core::result::Result::Ok(Self::ReductionOp(
                                ::planus::TableRead::from_buffer(buffer, field_offset)?,
                            )),
                            5 => ::core::result::Result::Ok(Self::GenericOp(
                                ::planus::TableRead::from_buffer(buffer, field_offset)?,
                            )),
                            _ => ::core::result::Result::Err(
                                ::planus::errors::ErrorKind::UnknownUnionTag { tag },
                            ),
                        }
                    }
                }

                impl<'a> ::planus::VectorReadUnion<'a> for OpRef<'a> {
                    const VECTOR_NAME: &'static str = "[OpRef]";
                }

                ///  One node: a named operation and its compute type.
                ///
                /// Generated from these locations:
                /// * Table `Node` in the file `schemas/graph.fbs:208`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct Node {
                    /// The field `name` in the table `Node`
                    pub name: ::core::option::Option<::planus::alloc::string::String>,
                    /// The field `compute_type` in the table `Node`
                    pub compute_type: self::DataType,
                    /// The field `op` in the table `Node`
                    pub op: self::Op,
                }

                impl Node {
                    /// Creates a [NodeBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> NodeBuilder<()> {
                        NodeBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_name: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                        field_compute_type: impl ::planus::WriteAsDefault<
                            self::DataType,
                            self::DataType,
                        >,
                        field_op: impl ::planus::WriteAsUnion<self::Op>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_name = field_name.prepare(builder);
                        let prepared_compute_type =
                            field_compute_type.prepare(builder, &self::DataType::F32);
                        let prepared_op = field_op.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<12> =
                            ::core::default::Default::default();
                        if prepared_name.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(0);
                        }
                        table_writer.write_entry::<::planus::Offset<self::Op>>(3);
                        if prepared_compute_type.is_some() {
                            table_writer.write_entry::<self::DataType>(1);
                        }
                        table_writer.write_entry::<u8>(2);

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_name) = prepared_name {
                                    object_writer.write::<_, _, 4>(&prepared_name);
                                }
                                object_writer.write::<_, _, 4>(&prepared_op.offset());
                                if let ::core::option::Option::Some(prepared_compute_type) =
                                    prepared_compute_type
                                {
                                    object_writer.write::<_, _, 1>(&prepared_compute_type);
                                }
                                object_writer.write::<_, _, 1>(&prepared_op.tag());
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<Node>> for Node {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Node> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<Node>> for Node {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Node>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<Node> for Node {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Node> {
                        Node::create(builder, &self.name, self.compute_type, &self.op)
                    }
                }

                /// Builder for serializing an instance of the [Node] type.
                ///
                /// Can be created using the [Node::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct NodeBuilder<State>(State);

                impl NodeBuilder<()> {
                    /// Setter for the [`name` field](Node#structfield.name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name<T0>(self, value: T0) -> NodeBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        NodeBuilder((value,))
                    }

                    /// Sets the [`name` field](Node#structfield.name) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name_as_null(self) -> NodeBuilder<((),)> {
                        self.name(())
                    }
                }

                impl<T0> NodeBuilder<(T0,)> {
                    /// Setter for the [`compute_type` field](Node#structfield.compute_type).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn compute_type<T1>(self, value: T1) -> NodeBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                    {
                        let (v0,) = self.0;
                        NodeBuilder((v0, value))
                    }

                    /// Sets the [`compute_type` field](Node#structfield.compute_type) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn compute_type_as_default(
                        self,
                    ) -> NodeBuilder<(T0, ::planus::DefaultValue)> {
                        self.compute_type(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> NodeBuilder<(T0, T1)> {
                    /// Setter for the [`op` field](Node#structfield.op).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn op<T2>(self, value: T2) -> NodeBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsUnion<self::Op>,
                    {
                        let (v0, v1) = self.0;
                        NodeBuilder((v0, v1, value))
                    }
                }

                impl<T0, T1, T2> NodeBuilder<(T0, T1, T2)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Node].
                    #[inline]
                    pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<Node>
                    where
                        Self: ::planus::WriteAsOffset<Node>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T1: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        T2: ::planus::WriteAsUnion<self::Op>,
                    > ::planus::WriteAs<::planus::Offset<Node>> for NodeBuilder<(T0, T1, T2)>
                {
                    type Prepared = ::planus::Offset<Node>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Node> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T1: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        T2: ::planus::WriteAsUnion<self::Op>,
                    > ::planus::WriteAsOptional<::planus::Offset<Node>>
                    for NodeBuilder<(T0, T1, T2)>
                {
                    type Prepared = ::planus::Offset<Node>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Node>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T1: ::planus::WriteAsDefault<self::DataType, self::DataType>,
                        T2: ::planus::WriteAsUnion<self::Op>,
                    > ::planus::WriteAsOffset<Node> for NodeBuilder<(T0, T1, T2)>
                {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Node> {
                        let (v0, v1, v2) = &self.0;
                        Node::create(builder, v0, v1, v2)
                    }
                }

                /// Reference to a deserialized [Node].
                #[derive(Copy, Clone)]
                pub struct NodeRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> NodeRef<'a> {
                    /// Getter for the [`name` field](Node#structfield.name).
                    #[inline]
                    pub fn name(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(0, "Node", "name")
                    }

                    /// Getter for the [`compute_type` field](Node#structfield.compute_type).
                    #[inline]
                    pub fn compute_type(&self) -> ::planus::Result<self::DataType> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(1, "Node", "compute_type")?
                                .unwrap_or(self::DataType::F32),
                        )
                    }

                    /// Getter for the [`op` field](Node#structfield.op).
                    #[inline]
                    pub fn op(&self) -> ::planus::Result<self::OpRef<'a>> {
                        self.0.access_union_required(2, "Node", "op")
                    }
                }

                impl<'a> ::core::fmt::Debug for NodeRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("NodeRef");
                        if let ::core::option::Option::Some(field_name) = self.name().transpose() {
                            f.field("name", &field_name);
                        }
                        f.field("compute_type", &self.compute_type());
                        f.field("op", &self.op());
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<NodeRef<'a>> for Node {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: NodeRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            name: value.name()?.map(::core::convert::Into::into),
                            compute_type: ::core::convert::TryInto::try_into(
                                value.compute_type()?,
                            )?,
                            op: ::core::convert::TryInto::try_into(value.op()?)?,
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for NodeRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for NodeRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[NodeRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<Node>> for Node {
                    type Value = ::planus::Offset<Node>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<Node>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for NodeRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[NodeRef]", "read_as_root", 0)
                        })
                    }
                }

                ///  The root of a graph blob body. Nodes are in topological order.
                ///
                /// Generated from these locations:
                /// * Table `Graph` in the file `schemas/graph.fbs:215`
                #[derive(
                    Clone, Debug, PartialEq, PartialOrd, ::serde::Serialize, ::serde::Deserialize,
                )]
                pub struct Graph {
                    /// The field `name` in the table `Graph`
                    pub name: ::core::option::Option<::planus::alloc::string::String>,
                    /// The field `tensors` in the table `Graph`
                    pub tensors: ::planus::alloc::vec::Vec<self::Tensor>,
                    /// The field `nodes` in the table `Graph`
                    pub nodes: ::planus::alloc::vec::Vec<self::Node>,
                    ///  The graph body's minor version: 0 (absent) when every node has a dedicated table, 1 when
                    ///  some node is a `GenericOp`, 2 when the graph uses a data type, pointwise mode or field of
                    ///  minor 2. Readers refuse a minor above their own with NOT_SUPPORTED.
                    pub minor_version: u32,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for Graph {
                    fn default() -> Self {
                        Self {
                            name: ::core::default::Default::default(),
                            tensors: ::core::default::Default::default(),
                            nodes: ::core::default::Default::default(),
                            minor_version: 0,
                        }
                    }
                }

                impl Graph {
                    /// Creates a [GraphBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> GraphBuilder<()> {
                        GraphBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_name: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                        field_tensors: impl ::planus::WriteAs<
                            ::planus::Offset<[::planus::Offset<self::Tensor>]>,
                        >,
                        field_nodes: impl ::planus::WriteAs<
                            ::planus::Offset<[::planus::Offset<self::Node>]>,
                        >,
                        field_minor_version: impl ::planus::WriteAsDefault<u32, u32>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_name = field_name.prepare(builder);
                        let prepared_tensors = field_tensors.prepare(builder);
                        let prepared_nodes = field_nodes.prepare(builder);
                        let prepared_minor_version = field_minor_version.prepare(builder, &0);

                        let mut table_writer: ::planus::table_writer::TableWriter<12> =
                            ::core::default::Default::default();
                        if prepared_name.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(0);
                        }
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::Tensor>]>>(1);
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::Node>]>>(2);
                        if prepared_minor_version.is_some() {
                            table_writer.write_entry::<u32>(3);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_name) = prepared_name {
                                    object_writer.write::<_, _, 4>(&prepared_name);
                                }
                                object_writer.write::<_, _, 4>(&prepared_tensors);
                                object_writer.write::<_, _, 4>(&prepared_nodes);
                                if let ::core::option::Option::Some(prepared_minor_version) =
                                    prepared_minor_version
                                {
                                    object_writer.write::<_, _, 4>(&prepared_minor_version);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<Graph>> for Graph {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Graph> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<Graph>> for Graph {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Graph>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<Graph> for Graph {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Graph> {
                        Graph::create(
                            builder,
                            &self.name,
                            &self.tensors,
                            &self.nodes,
                            self.minor_version,
                        )
                    }
                }

                /// Builder for serializing an instance of the [Graph] type.
                ///
                /// Can be created using the [Graph::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct GraphBuilder<State>(State);

                impl GraphBuilder<()> {
                    /// Setter for the [`name` field](Graph#structfield.name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name<T0>(self, value: T0) -> GraphBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        GraphBuilder((value,))
                    }

                    /// Sets the [`name` field](Graph#structfield.name) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn name_as_null(self) -> GraphBuilder<((),)> {
                        self.name(())
                    }
                }

                impl<T0> GraphBuilder<(T0,)> {
                    /// Setter for the [`tensors` field](Graph#structfield.tensors).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn tensors<T1>(self, value: T1) -> GraphBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                    {
                        let (v0,) = self.0;
                        GraphBuilder((v0, value))
                    }
                }

                impl<T0, T1> GraphBuilder<(T0, T1)> {
                    /// Setter for the [`nodes` field](Graph#structfield.nodes).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn nodes<T2>(self, value: T2) -> GraphBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Node>]>>,
                    {
                        let (v0, v1) = self.0;
                        GraphBuilder((v0, v1, value))
                    }
                }

                impl<T0, T1, T2> GraphBuilder<(T0, T1, T2)> {
                    /// Setter for the [`minor_version` field](Graph#structfield.minor_version).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn minor_version<T3>(self, value: T3) -> GraphBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsDefault<u32, u32>,
                    {
                        let (v0, v1, v2) = self.0;
                        GraphBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`minor_version` field](Graph#structfield.minor_version) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn minor_version_as_default(
                        self,
                    ) -> GraphBuilder<(T0, T1, T2, ::planus::DefaultValue)> {
                        self.minor_version(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3> GraphBuilder<(T0, T1, T2, T3)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Graph].
                    #[inline]
                    pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<Graph>
                    where
                        Self: ::planus::WriteAsOffset<Graph>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T1: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                        T2: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Node>]>>,
                        T3: ::planus::WriteAsDefault<u32, u32>,
                    > ::planus::WriteAs<::planus::Offset<Graph>>
                    for GraphBuilder<(T0, T1, T2, T3)>
                {
                    type Prepared = ::planus::Offset<Graph>;

                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Graph> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T1: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                        T2: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Node>]>>,
                        T3: ::planus::WriteAsDefault<u32, u32>,
                    > ::planus::WriteAsOptional<::planus::Offset<Graph>>
                    for GraphBuilder<(T0, T1, T2, T3)>
                {
                    type Prepared = ::planus::Offset<Graph>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Graph>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T1: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                        T2: ::planus::WriteAs<::planus::Offset<[::planus::Offset<self::Node>]>>,
                        T3: ::planus::WriteAsDefault<u32, u32>,
                    > ::planus::WriteAsOffset<Graph> for GraphBuilder<(T0, T1, T2, T3)>
                {
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Graph> {
                        let (v0, v1, v2, v3) = &self.0;
                        Graph::create(builder, v0, v1, v2, v3)
                    }
                }

                /// Reference to a deserialized [Graph].
                #[derive(Copy, Clone)]
                pub struct GraphRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> GraphRef<'a> {
                    /// Getter for the [`name` field](Graph#structfield.name).
                    #[inline]
                    pub fn name(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(0, "Graph", "name")
                    }

                    /// Getter for the [`tensors` field](Graph#structfield.tensors).
                    #[inline]
                    pub fn tensors(
                        &self,
                    ) -> ::planus::Result<::planus::Vector<'a, ::planus::Result<self::TensorRef<'a>>>>
                    {
                        self.0.access_required(1, "Graph", "tensors")
                    }

                    /// Getter for the [`nodes` field](Graph#structfield.nodes).
                    #[inline]
                    pub fn nodes(
                        &self,
                    ) -> ::planus::Result<::planus::Vector<'a, ::planus::Result<self::NodeRef<'a>>>>
                    {
                        self.0.access_required(2, "Graph", "nodes")
                    }

                    /// Getter for the [`minor_version` field](Graph#structfield.minor_version).
                    #[inline]
                    pub fn minor_version(&self) -> ::planus::Result<u32> {
                        ::core::result::Result::Ok(
                            self.0.access(3, "Graph", "minor_version")?.unwrap_or(0),
                        )
                    }
                }

                impl<'a> ::core::fmt::Debug for GraphRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("GraphRef");
                        if let ::core::option::Option::Some(field_name) = self.name().transpose() {
                            f.field("name", &field_name);
                        }
                        f.field("tensors", &self.tensors());
                        f.field("nodes", &self.nodes());
                        f.field("minor_version", &self.minor_version());
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<GraphRef<'a>> for Graph {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: GraphRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            name: value.name()?.map(::core::convert::Into::into),
                            tensors: value.tensors()?.to_vec_result()?,
                            nodes: value.nodes()?.to_vec_result()?,
                            minor_version: ::core::convert::TryInto::try_into(
                                value.minor_version()?,
                            )?,
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for GraphRef<'a> {
                    #[inline]
                    fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind>
                    {
                        ::core::result::Result::Ok(Self(
                            ::planus::table_reader::Table::from_buffer(buffer, offset)?,
                        ))
                    }
                }

                impl<'a> ::planus::VectorReadInner<'a> for GraphRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[GraphRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<Graph>> for Graph {
                    type Value = ::planus::Offset<Graph>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<Graph>],
                        bytes: *mut ::core::mem::MaybeUninit<u8>,
                        buffer_position: u32,
                    ) {
                        let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 4];
                        for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                            ::planus::WriteAsPrimitive::write(
                                v,
                                ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                                buffer_position - (Self::STRIDE * i) as u32,
                            );
                        }
                    }
                }

                impl<'a> ::planus::ReadAsRoot<'a> for GraphRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[GraphRef]", "read_as_root", 0)
                        })
                    }
                }
            }
        }
    }
}
