pub use root::*;

const _: () = ::planus::check_version_compatibility("planus-1.3.0");

/// The root namespace
///
/// Generated from these locations:
/// * File `schemas/cuda_payload.fbs`
#[no_implicit_prelude]
#[allow(clippy::needless_lifetimes)]
mod root {
    /// The namespace `kiln`
    ///
    /// Generated from these locations:
    /// * File `schemas/cuda_payload.fbs`
    pub mod kiln {
        /// The namespace `kiln.cuda`
        ///
        /// Generated from these locations:
        /// * File `schemas/cuda_payload.fbs`
        pub mod cuda {
            ///  What a kernel parameter receives at launch.
            ///
            /// Generated from these locations:
            /// * Enum `ArgumentKind` in the file `schemas/cuda_payload.fbs:11`
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
            pub enum ArgumentKind {
                ///  The device pointer bound to tensor `tensor_uid`.
                TensorPointer = 0,

                ///  A 4-byte value passed by value: the low 32 bits of `scalar_bits`.
                Scalar32 = 1,

                ///  An 8-byte value passed by value: `scalar_bits`.
                Scalar64 = 2,

                ///  (minor 1) A 128-byte CUtensorMap passed by value: entry `scalar_bits` of the launch's
                ///  `tensor_maps`, encoded on the load device over the pointer bound to its tensor.
                TensorMap = 3,

                ///  (minor 2) The device pointer of the plan's workspace plus `scalar_bits` bytes (less than
                ///  `CudaPayload.workspace_size`); the caller passes the workspace at execute.
                Workspace = 4,
            }

            impl ArgumentKind {
                /// Array containing all valid variants of ArgumentKind
                pub const ENUM_VALUES: [Self; 5] = [
                    Self::TensorPointer,
                    Self::Scalar32,
                    Self::Scalar64,
                    Self::TensorMap,
                    Self::Workspace,
                ];
            }

            impl ::core::convert::TryFrom<u8> for ArgumentKind {
                type Error = ::planus::errors::UnknownEnumTagKind;
                #[inline]
                fn try_from(
                    value: u8,
                ) -> ::core::result::Result<Self, ::planus::errors::UnknownEnumTagKind>
                {
                    #[allow(clippy::match_single_binding)]
                    match value {
                        0 => ::core::result::Result::Ok(ArgumentKind::TensorPointer),
                        1 => ::core::result::Result::Ok(ArgumentKind::Scalar32),
                        2 => ::core::result::Result::Ok(ArgumentKind::Scalar64),
                        3 => ::core::result::Result::Ok(ArgumentKind::TensorMap),
                        4 => ::core::result::Result::Ok(ArgumentKind::Workspace),

                        _ => ::core::result::Result::Err(::planus::errors::UnknownEnumTagKind {
                            tag: value as i128,
                        }),
                    }
                }
            }

            impl ::core::convert::From<ArgumentKind> for u8 {
                #[inline]
                fn from(value: ArgumentKind) -> Self {
                    value as u8
                }
            }

            /// # Safety
            /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
            unsafe impl ::planus::Primitive for ArgumentKind {
                const ALIGNMENT: usize = 1;
                const SIZE: usize = 1;
            }

            impl ::planus::WriteAsPrimitive<ArgumentKind> for ArgumentKind {
                #[inline]
                fn write<const N: usize>(
                    &self,
                    cursor: ::planus::Cursor<'_, N>,
                    buffer_position: u32,
                ) {
                    (*self as u8).write(cursor, buffer_position);
                }
            }

            impl ::planus::WriteAs<ArgumentKind> for ArgumentKind {
                type Prepared = Self;

                #[inline]
                fn prepare(&self, _builder: &mut ::planus::Builder) -> ArgumentKind {
                    *self
                }
            }

            impl ::planus::WriteAsDefault<ArgumentKind, ArgumentKind> for ArgumentKind {
                type Prepared = Self;

                #[inline]
                fn prepare(
                    &self,
                    _builder: &mut ::planus::Builder,
                    default: &ArgumentKind,
                ) -> ::core::option::Option<ArgumentKind> {
                    if self == default {
                        ::core::option::Option::None
                    } else {
                        ::core::option::Option::Some(*self)
                    }
                }
            }

            impl ::planus::WriteAsOptional<ArgumentKind> for ArgumentKind {
                type Prepared = Self;

                #[inline]
                fn prepare(
                    &self,
                    _builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<ArgumentKind> {
                    ::core::option::Option::Some(*self)
                }
            }

            impl<'buf> ::planus::TableRead<'buf> for ArgumentKind {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'buf>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    let n: u8 = ::planus::TableRead::from_buffer(buffer, offset)?;
                    ::core::result::Result::Ok(::core::convert::TryInto::try_into(n)?)
                }
            }

            impl<'buf> ::planus::VectorReadInner<'buf> for ArgumentKind {
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
                            "ArgumentKind",
                            "VectorRead::from_buffer",
                            buffer.offset_from_start,
                        )
                    })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<ArgumentKind> for ArgumentKind {
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

            ///  One kernel parameter, in parameter order.
            ///
            /// Generated from these locations:
            /// * Table `Argument` in the file `schemas/cuda_payload.fbs:27`
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
            pub struct Argument {
                /// The field `kind` in the table `Argument`
                pub kind: self::ArgumentKind,
                ///  TensorPointer: the UID of a tensor listed in `CudaPayload.tensors`.
                pub tensor_uid: i64,
                ///  Scalar32 / Scalar64: the value's bits (little-endian in memory when passed).
                pub scalar_bits: u64,
            }

            #[allow(clippy::derivable_impls)]
            impl ::core::default::Default for Argument {
                fn default() -> Self {
                    Self {
                        kind: self::ArgumentKind::TensorPointer,
                        tensor_uid: 0,
                        scalar_bits: 0,
                    }
                }
            }

            impl Argument {
                /// Creates a [ArgumentBuilder] for serializing an instance of this table.
                #[inline]
                pub fn builder() -> ArgumentBuilder<()> {
                    ArgumentBuilder(())
                }

                #[allow(clippy::too_many_arguments)]
                pub fn create(
                    builder: &mut ::planus::Builder,
                    field_kind: impl ::planus::WriteAsDefault<self::ArgumentKind, self::ArgumentKind>,
                    field_tensor_uid: impl ::planus::WriteAsDefault<i64, i64>,
                    field_scalar_bits: impl ::planus::WriteAsDefault<u64, u64>,
                ) -> ::planus::Offset<Self> {
                    let prepared_kind =
                        field_kind.prepare(builder, &self::ArgumentKind::TensorPointer);
                    let prepared_tensor_uid = field_tensor_uid.prepare(builder, &0);
                    let prepared_scalar_bits = field_scalar_bits.prepare(builder, &0);

                    let mut table_writer: ::planus::table_writer::TableWriter<10> =
                        ::core::default::Default::default();
                    if prepared_tensor_uid.is_some() {
                        table_writer.write_entry::<i64>(1);
                    }
                    if prepared_scalar_bits.is_some() {
                        table_writer.write_entry::<u64>(2);
                    }
                    if prepared_kind.is_some() {
                        table_writer.write_entry::<self::ArgumentKind>(0);
                    }

                    unsafe {
                        table_writer.finish(builder, |object_writer| {
                            if let ::core::option::Option::Some(prepared_tensor_uid) =
                                prepared_tensor_uid
                            {
                                object_writer.write::<_, _, 8>(&prepared_tensor_uid);
                            }
                            if let ::core::option::Option::Some(prepared_scalar_bits) =
                                prepared_scalar_bits
                            {
                                object_writer.write::<_, _, 8>(&prepared_scalar_bits);
                            }
                            if let ::core::option::Option::Some(prepared_kind) = prepared_kind {
                                object_writer.write::<_, _, 1>(&prepared_kind);
                            }
                        });
                    }
                    builder.current_offset()
                }
            }

            impl ::planus::WriteAs<::planus::Offset<Argument>> for Argument {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Argument> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl ::planus::WriteAsOptional<::planus::Offset<Argument>> for Argument {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<Argument>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl ::planus::WriteAsOffset<Argument> for Argument {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Argument> {
                    Argument::create(builder, self.kind, self.tensor_uid, self.scalar_bits)
                }
            }

            /// Builder for serializing an instance of the [Argument] type.
            ///
            /// Can be created using the [Argument::builder] method.
            #[derive(Debug)]
            #[must_use]
            pub struct ArgumentBuilder<State>(State);

            impl ArgumentBuilder<()> {
                /// Setter for the [`kind` field](Argument#structfield.kind).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn kind<T0>(self, value: T0) -> ArgumentBuilder<(T0,)>
                where
                    T0: ::planus::WriteAsDefault<self::ArgumentKind, self::ArgumentKind>,
                {
                    ArgumentBuilder((value,))
                }

                /// Sets the [`kind` field](Argument#structfield.kind) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn kind_as_default(self) -> ArgumentBuilder<(::planus::DefaultValue,)> {
                    self.kind(::planus::DefaultValue)
                }
            }

            impl<T0> ArgumentBuilder<(T0,)> {
                /// Setter for the [`tensor_uid` field](Argument#structfield.tensor_uid).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensor_uid<T1>(self, value: T1) -> ArgumentBuilder<(T0, T1)>
                where
                    T1: ::planus::WriteAsDefault<i64, i64>,
                {
                    let (v0,) = self.0;
                    ArgumentBuilder((v0, value))
                }

                /// Sets the [`tensor_uid` field](Argument#structfield.tensor_uid) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensor_uid_as_default(
                    self,
                ) -> ArgumentBuilder<(T0, ::planus::DefaultValue)> {
                    self.tensor_uid(::planus::DefaultValue)
                }
            }

            impl<T0, T1> ArgumentBuilder<(T0, T1)> {
                /// Setter for the [`scalar_bits` field](Argument#structfield.scalar_bits).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn scalar_bits<T2>(self, value: T2) -> ArgumentBuilder<(T0, T1, T2)>
                where
                    T2: ::planus::WriteAsDefault<u64, u64>,
                {
                    let (v0, v1) = self.0;
                    ArgumentBuilder((v0, v1, value))
                }

                /// Sets the [`scalar_bits` field](Argument#structfield.scalar_bits) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn scalar_bits_as_default(
                    self,
                ) -> ArgumentBuilder<(T0, T1, ::planus::DefaultValue)> {
                    self.scalar_bits(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2> ArgumentBuilder<(T0, T1, T2)> {
                /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Argument].
                #[inline]
                pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<Argument>
                where
                    Self: ::planus::WriteAsOffset<Argument>,
                {
                    ::planus::WriteAsOffset::prepare(&self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<self::ArgumentKind, self::ArgumentKind>,
                    T1: ::planus::WriteAsDefault<i64, i64>,
                    T2: ::planus::WriteAsDefault<u64, u64>,
                > ::planus::WriteAs<::planus::Offset<Argument>> for ArgumentBuilder<(T0, T1, T2)>
            {
                type Prepared = ::planus::Offset<Argument>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Argument> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<self::ArgumentKind, self::ArgumentKind>,
                    T1: ::planus::WriteAsDefault<i64, i64>,
                    T2: ::planus::WriteAsDefault<u64, u64>,
                > ::planus::WriteAsOptional<::planus::Offset<Argument>>
                for ArgumentBuilder<(T0, T1, T2)>
            {
                type Prepared = ::planus::Offset<Argument>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<Argument>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<self::ArgumentKind, self::ArgumentKind>,
                    T1: ::planus::WriteAsDefault<i64, i64>,
                    T2: ::planus::WriteAsDefault<u64, u64>,
                > ::planus::WriteAsOffset<Argument> for ArgumentBuilder<(T0, T1, T2)>
            {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Argument> {
                    let (v0, v1, v2) = &self.0;
                    Argument::create(builder, v0, v1, v2)
                }
            }

            /// Reference to a deserialized [Argument].
            #[derive(Copy, Clone)]
            pub struct ArgumentRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

            impl<'a> ArgumentRef<'a> {
                /// Getter for the [`kind` field](Argument#structfield.kind).
                #[inline]
                pub fn kind(&self) -> ::planus::Result<self::ArgumentKind> {
                    ::core::result::Result::Ok(
                        self.0
                            .access(0, "Argument", "kind")?
                            .unwrap_or(self::ArgumentKind::TensorPointer),
                    )
                }

                /// Getter for the [`tensor_uid` field](Argument#structfield.tensor_uid).
                #[inline]
                pub fn tensor_uid(&self) -> ::planus::Result<i64> {
                    ::core::result::Result::Ok(
                        self.0.access(1, "Argument", "tensor_uid")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`scalar_bits` field](Argument#structfield.scalar_bits).
                #[inline]
                pub fn scalar_bits(&self) -> ::planus::Result<u64> {
                    ::core::result::Result::Ok(
                        self.0.access(2, "Argument", "scalar_bits")?.unwrap_or(0),
                    )
                }
            }

            impl<'a> ::core::fmt::Debug for ArgumentRef<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("ArgumentRef");
                    f.field("kind", &self.kind());
                    f.field("tensor_uid", &self.tensor_uid());
                    f.field("scalar_bits", &self.scalar_bits());
                    f.finish()
                }
            }

            impl<'a> ::core::convert::TryFrom<ArgumentRef<'a>> for Argument {
                type Error = ::planus::Error;

                #[allow(unreachable_code)]
                fn try_from(value: ArgumentRef<'a>) -> ::planus::Result<Self> {
                    ::core::result::Result::Ok(Self {
                        kind: ::core::convert::TryInto::try_into(value.kind()?)?,
                        tensor_uid: ::core::convert::TryInto::try_into(value.tensor_uid()?)?,
                        scalar_bits: ::core::convert::TryInto::try_into(value.scalar_bits()?)?,
                    })
                }
            }

            impl<'a> ::planus::TableRead<'a> for ArgumentRef<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    ::core::result::Result::Ok(Self(::planus::table_reader::Table::from_buffer(
                        buffer, offset,
                    )?))
                }
            }

            impl<'a> ::planus::VectorReadInner<'a> for ArgumentRef<'a> {
                type Error = ::planus::Error;
                const STRIDE: usize = 4;

                unsafe fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                        error_kind.with_error_location(
                            "[ArgumentRef]",
                            "get",
                            buffer.offset_from_start,
                        )
                    })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<::planus::Offset<Argument>> for Argument {
                type Value = ::planus::Offset<Argument>;
                const STRIDE: usize = 4;
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                    ::planus::WriteAs::prepare(self, builder)
                }

                #[inline]
                unsafe fn write_values(
                    values: &[::planus::Offset<Argument>],
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

            impl<'a> ::planus::ReadAsRoot<'a> for ArgumentRef<'a> {
                fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(
                        ::planus::SliceWithStartOffset {
                            buffer: slice,
                            offset_from_start: 0,
                        },
                        0,
                    )
                    .map_err(|error_kind| {
                        error_kind.with_error_location("[ArgumentRef]", "read_as_root", 0)
                    })
                }
            }

            ///  A grid or block shape.
            ///
            /// Generated from these locations:
            /// * Struct `Dim3` in the file `schemas/cuda_payload.fbs:36`
            #[derive(
                Copy,
                Clone,
                Debug,
                PartialEq,
                PartialOrd,
                Eq,
                Ord,
                Hash,
                Default,
                ::serde::Serialize,
                ::serde::Deserialize,
            )]
            pub struct Dim3 {
                /// The field `x` in the struct `Dim3`
                pub x: u32,

                /// The field `y` in the struct `Dim3`
                pub y: u32,

                /// The field `z` in the struct `Dim3`
                pub z: u32,
            }

            /// # Safety
            /// The Planus compiler correctly calculates `ALIGNMENT` and `SIZE`.
            unsafe impl ::planus::Primitive for Dim3 {
                const ALIGNMENT: usize = 4;
                const SIZE: usize = 12;
            }

            #[allow(clippy::identity_op)]
            impl ::planus::WriteAsPrimitive<Dim3> for Dim3 {
                #[inline]
                fn write<const N: usize>(
                    &self,
                    cursor: ::planus::Cursor<'_, N>,
                    buffer_position: u32,
                ) {
                    let (cur, cursor) = cursor.split::<4, 8>();
                    self.x.write(cur, buffer_position - 0);
                    let (cur, cursor) = cursor.split::<4, 4>();
                    self.y.write(cur, buffer_position - 4);
                    let (cur, cursor) = cursor.split::<4, 0>();
                    self.z.write(cur, buffer_position - 8);
                    cursor.finish([]);
                }
            }

            impl ::planus::WriteAsOffset<Dim3> for Dim3 {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Dim3> {
                    unsafe {
                        builder.write_with(12, 3, |buffer_position, bytes| {
                            let bytes = bytes.as_mut_ptr();

                            ::planus::WriteAsPrimitive::write(
                                self,
                                ::planus::Cursor::new(
                                    &mut *(bytes as *mut [::core::mem::MaybeUninit<u8>; 12]),
                                ),
                                buffer_position,
                            );
                        });
                    }
                    builder.current_offset()
                }
            }

            impl ::planus::WriteAs<Dim3> for Dim3 {
                type Prepared = Self;
                #[inline]
                fn prepare(&self, _builder: &mut ::planus::Builder) -> Self {
                    *self
                }
            }

            impl ::planus::WriteAsOptional<Dim3> for Dim3 {
                type Prepared = Self;
                #[inline]
                fn prepare(
                    &self,
                    _builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<Self> {
                    ::core::option::Option::Some(*self)
                }
            }

            /// Reference to a deserialized [Dim3].
            #[derive(Copy, Clone)]
            pub struct Dim3Ref<'a>(::planus::ArrayWithStartOffset<'a, 12>);

            impl<'a> Dim3Ref<'a> {
                /// Getter for the [`x` field](Dim3#structfield.x).
                pub fn x(&self) -> u32 {
                    let buffer = self.0.advance_as_array::<4>(0).unwrap();

                    u32::from_le_bytes(*buffer.as_array())
                }

                /// Getter for the [`y` field](Dim3#structfield.y).
                pub fn y(&self) -> u32 {
                    let buffer = self.0.advance_as_array::<4>(4).unwrap();

                    u32::from_le_bytes(*buffer.as_array())
                }

                /// Getter for the [`z` field](Dim3#structfield.z).
                pub fn z(&self) -> u32 {
                    let buffer = self.0.advance_as_array::<4>(8).unwrap();

                    u32::from_le_bytes(*buffer.as_array())
                }
            }

            impl<'a> ::core::fmt::Debug for Dim3Ref<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("Dim3Ref");
                    f.field("x", &self.x());
                    f.field("y", &self.y());
                    f.field("z", &self.z());
                    f.finish()
                }
            }

            impl<'a> ::core::convert::From<::planus::ArrayWithStartOffset<'a, 12>> for Dim3Ref<'a> {
                fn from(array: ::planus::ArrayWithStartOffset<'a, 12>) -> Self {
                    Self(array)
                }
            }

            impl<'a> ::core::convert::From<Dim3Ref<'a>> for Dim3 {
                #[allow(unreachable_code)]
                fn from(value: Dim3Ref<'a>) -> Self {
                    Self {
                        x: value.x(),
                        y: value.y(),
                        z: value.z(),
                    }
                }
            }

            impl<'a, 'b> ::core::cmp::PartialEq<Dim3Ref<'a>> for Dim3Ref<'b> {
                fn eq(&self, other: &Dim3Ref<'_>) -> bool {
                    self.x() == other.x() && self.y() == other.y() && self.z() == other.z()
                }
            }

            impl<'a> ::core::cmp::Eq for Dim3Ref<'a> {}
            impl<'a, 'b> ::core::cmp::PartialOrd<Dim3Ref<'a>> for Dim3Ref<'b> {
                fn partial_cmp(
                    &self,
                    other: &Dim3Ref<'_>,
                ) -> ::core::option::Option<::core::cmp::Ordering> {
                    ::core::option::Option::Some(::core::cmp::Ord::cmp(self, other))
                }
            }

            impl<'a> ::core::cmp::Ord for Dim3Ref<'a> {
                fn cmp(&self, other: &Dim3Ref<'_>) -> ::core::cmp::Ordering {
                    self.x()
                        .cmp(&other.x())
                        .then_with(|| self.y().cmp(&other.y()))
                        .then_with(|| self.z().cmp(&other.z()))
                }
            }

            impl<'a> ::core::hash::Hash for Dim3Ref<'a> {
                fn hash<H: ::core::hash::Hasher>(&self, state: &mut H) {
                    self.x().hash(state);
                    self.y().hash(state);
                    self.z().hash(state);
                }
            }

            impl<'a> ::planus::TableRead<'a> for Dim3Ref<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    let buffer = buffer.advance_as_array::<12>(offset)?;
                    ::core::result::Result::Ok(Self(buffer))
                }
            }

            impl<'a> ::planus::VectorRead<'a> for Dim3Ref<'a> {
                const STRIDE: usize = 12;

                #[inline]
                unsafe fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> Self {
                    Self(unsafe { buffer.unchecked_advance_as_array(offset) })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<Dim3> for Dim3 {
                const STRIDE: usize = 12;

                type Value = Dim3;

                #[inline]
                fn prepare(&self, _builder: &mut ::planus::Builder) -> Self::Value {
                    *self
                }

                #[inline]
                unsafe fn write_values(
                    values: &[Dim3],
                    bytes: *mut ::core::mem::MaybeUninit<u8>,
                    buffer_position: u32,
                ) {
                    let bytes = bytes as *mut [::core::mem::MaybeUninit<u8>; 12];
                    for (i, v) in ::core::iter::Iterator::enumerate(values.iter()) {
                        ::planus::WriteAsPrimitive::write(
                            v,
                            ::planus::Cursor::new(unsafe { &mut *bytes.add(i) }),
                            buffer_position - (12 * i) as u32,
                        );
                    }
                }
            }

            ///  (minor 1) The recipe of a tensor map for tiled loads (128-byte swizzle, zero fill out of
            ///  bounds, no interleave); a plan never stores an encoded map, which embeds a device address.
            ///
            /// Generated from these locations:
            /// * Table `TensorMap` in the file `schemas/cuda_payload.fbs:44`
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
            pub struct TensorMap {
                ///  The tensor whose bound pointer is the map's global address; listed in `CudaPayload.tensors`.
                pub tensor_uid: i64,
                ///  kiln-core's data type code (f16 or bf16).
                pub data_type: u8,
                ///  Extents, innermost first (rank 2 to 5); the innermost dim is contiguous.
                pub dims: ::core::option::Option<::planus::alloc::vec::Vec<u64>>,
                ///  Byte strides of dims 1.. (rank - 1 entries), multiples of 16.
                pub strides: ::core::option::Option<::planus::alloc::vec::Vec<u64>>,
                ///  The box of one copy, innermost first (rank entries, each 1 to 256).
                pub box_dims: ::core::option::Option<::planus::alloc::vec::Vec<u32>>,
            }

            #[allow(clippy::derivable_impls)]
            impl ::core::default::Default for TensorMap {
                fn default() -> Self {
                    Self {
                        tensor_uid: 0,
                        data_type: 0,
                        dims: ::core::default::Default::default(),
                        strides: ::core::default::Default::default(),
                        box_dims: ::core::default::Default::default(),
                    }
                }
            }

            impl TensorMap {
                /// Creates a [TensorMapBuilder] for serializing an instance of this table.
                #[inline]
                pub fn builder() -> TensorMapBuilder<()> {
                    TensorMapBuilder(())
                }

                #[allow(clippy::too_many_arguments)]
                pub fn create(
                    builder: &mut ::planus::Builder,
                    field_tensor_uid: impl ::planus::WriteAsDefault<i64, i64>,
                    field_data_type: impl ::planus::WriteAsDefault<u8, u8>,
                    field_dims: impl ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    field_strides: impl ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    field_box_dims: impl ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                ) -> ::planus::Offset<Self> {
                    let prepared_tensor_uid = field_tensor_uid.prepare(builder, &0);
                    let prepared_data_type = field_data_type.prepare(builder, &0);
                    let prepared_dims = field_dims.prepare(builder);
                    let prepared_strides = field_strides.prepare(builder);
                    let prepared_box_dims = field_box_dims.prepare(builder);

                    let mut table_writer: ::planus::table_writer::TableWriter<14> =
                        ::core::default::Default::default();
                    if prepared_tensor_uid.is_some() {
                        table_writer.write_entry::<i64>(0);
                    }
                    if prepared_dims.is_some() {
                        table_writer.write_entry::<::planus::Offset<[u64]>>(2);
                    }
                    if prepared_strides.is_some() {
                        table_writer.write_entry::<::planus::Offset<[u64]>>(3);
                    }
                    if prepared_box_dims.is_some() {
                        table_writer.write_entry::<::planus::Offset<[u32]>>(4);
                    }
                    if prepared_data_type.is_some() {
                        table_writer.write_entry::<u8>(1);
                    }

                    unsafe {
                        table_writer.finish(builder, |object_writer| {
                            if let ::core::option::Option::Some(prepared_tensor_uid) =
                                prepared_tensor_uid
                            {
                                object_writer.write::<_, _, 8>(&prepared_tensor_uid);
                            }
                            if let ::core::option::Option::Some(prepared_dims) = prepared_dims {
                                object_writer.write::<_, _, 4>(&prepared_dims);
                            }
                            if let ::core::option::Option::Some(prepared_strides) = prepared_strides
                            {
                                object_writer.write::<_, _, 4>(&prepared_strides);
                            }
                            if let ::core::option::Option::Some(prepared_box_dims) =
                                prepared_box_dims
                            {
                                object_writer.write::<_, _, 4>(&prepared_box_dims);
                            }
                            if let ::core::option::Option::Some(prepared_data_type) =
                                prepared_data_type
                            {
                                object_writer.write::<_, _, 1>(&prepared_data_type);
                            }
                        });
                    }
                    builder.current_offset()
                }
            }

            impl ::planus::WriteAs<::planus::Offset<TensorMap>> for TensorMap {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<TensorMap> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl ::planus::WriteAsOptional<::planus::Offset<TensorMap>> for TensorMap {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<TensorMap>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl ::planus::WriteAsOffset<TensorMap> for TensorMap {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<TensorMap> {
                    TensorMap::create(
                        builder,
                        self.tensor_uid,
                        self.data_type,
                        &self.dims,
                        &self.strides,
                        &self.box_dims,
                    )
                }
            }

            /// Builder for serializing an instance of the [TensorMap] type.
            ///
            /// Can be created using the [TensorMap::builder] method.
            #[derive(Debug)]
            #[must_use]
            pub struct TensorMapBuilder<State>(State);

            impl TensorMapBuilder<()> {
                /// Setter for the [`tensor_uid` field](TensorMap#structfield.tensor_uid).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensor_uid<T0>(self, value: T0) -> TensorMapBuilder<(T0,)>
                where
                    T0: ::planus::WriteAsDefault<i64, i64>,
                {
                    TensorMapBuilder((value,))
                }

                /// Sets the [`tensor_uid` field](TensorMap#structfield.tensor_uid) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensor_uid_as_default(self) -> TensorMapBuilder<(::planus::DefaultValue,)> {
                    self.tensor_uid(::planus::DefaultValue)
                }
            }

            impl<T0> TensorMapBuilder<(T0,)> {
                /// Setter for the [`data_type` field](TensorMap#structfield.data_type).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn data_type<T1>(self, value: T1) -> TensorMapBuilder<(T0, T1)>
                where
                    T1: ::planus::WriteAsDefault<u8, u8>,
                {
                    let (v0,) = self.0;
                    TensorMapBuilder((v0, value))
                }

                /// Sets the [`data_type` field](TensorMap#structfield.data_type) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn data_type_as_default(
                    self,
                ) -> TensorMapBuilder<(T0, ::planus::DefaultValue)> {
                    self.data_type(::planus::DefaultValue)
                }
            }

            impl<T0, T1> TensorMapBuilder<(T0, T1)> {
                /// Setter for the [`dims` field](TensorMap#structfield.dims).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn dims<T2>(self, value: T2) -> TensorMapBuilder<(T0, T1, T2)>
                where
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                {
                    let (v0, v1) = self.0;
                    TensorMapBuilder((v0, v1, value))
                }

                /// Sets the [`dims` field](TensorMap#structfield.dims) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn dims_as_null(self) -> TensorMapBuilder<(T0, T1, ())> {
                    self.dims(())
                }
            }

            impl<T0, T1, T2> TensorMapBuilder<(T0, T1, T2)> {
                /// Setter for the [`strides` field](TensorMap#structfield.strides).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn strides<T3>(self, value: T3) -> TensorMapBuilder<(T0, T1, T2, T3)>
                where
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                {
                    let (v0, v1, v2) = self.0;
                    TensorMapBuilder((v0, v1, v2, value))
                }

                /// Sets the [`strides` field](TensorMap#structfield.strides) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn strides_as_null(self) -> TensorMapBuilder<(T0, T1, T2, ())> {
                    self.strides(())
                }
            }

            impl<T0, T1, T2, T3> TensorMapBuilder<(T0, T1, T2, T3)> {
                /// Setter for the [`box_dims` field](TensorMap#structfield.box_dims).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn box_dims<T4>(self, value: T4) -> TensorMapBuilder<(T0, T1, T2, T3, T4)>
                where
                    T4: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                {
                    let (v0, v1, v2, v3) = self.0;
                    TensorMapBuilder((v0, v1, v2, v3, value))
                }

                /// Sets the [`box_dims` field](TensorMap#structfield.box_dims) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn box_dims_as_null(self) -> TensorMapBuilder<(T0, T1, T2, T3, ())> {
                    self.box_dims(())
                }
            }

            impl<T0, T1, T2, T3, T4> TensorMapBuilder<(T0, T1, T2, T3, T4)> {
                /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [TensorMap].
                #[inline]
                pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<TensorMap>
                where
                    Self: ::planus::WriteAsOffset<TensorMap>,
                {
                    ::planus::WriteAsOffset::prepare(&self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<i64, i64>,
                    T1: ::planus::WriteAsDefault<u8, u8>,
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    T4: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                > ::planus::WriteAs<::planus::Offset<TensorMap>>
                for TensorMapBuilder<(T0, T1, T2, T3, T4)>
            {
                type Prepared = ::planus::Offset<TensorMap>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<TensorMap> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<i64, i64>,
                    T1: ::planus::WriteAsDefault<u8, u8>,
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    T4: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                > ::planus::WriteAsOptional<::planus::Offset<TensorMap>>
                for TensorMapBuilder<(T0, T1, T2, T3, T4)>
            {
                type Prepared = ::planus::Offset<TensorMap>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<TensorMap>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<i64, i64>,
                    T1: ::planus::WriteAsDefault<u8, u8>,
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u64]>>,
                    T4: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                > ::planus::WriteAsOffset<TensorMap> for TensorMapBuilder<(T0, T1, T2, T3, T4)>
            {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<TensorMap> {
                    let (v0, v1, v2, v3, v4) = &self.0;
                    TensorMap::create(builder, v0, v1, v2, v3, v4)
                }
            }

            /// Reference to a deserialized [TensorMap].
            #[derive(Copy, Clone)]
            pub struct TensorMapRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

            impl<'a> TensorMapRef<'a> {
                /// Getter for the [`tensor_uid` field](TensorMap#structfield.tensor_uid).
                #[inline]
                pub fn tensor_uid(&self) -> ::planus::Result<i64> {
                    ::core::result::Result::Ok(
                        self.0.access(0, "TensorMap", "tensor_uid")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`data_type` field](TensorMap#structfield.data_type).
                #[inline]
                pub fn data_type(&self) -> ::planus::Result<u8> {
                    ::core::result::Result::Ok(
                        self.0.access(1, "TensorMap", "data_type")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`dims` field](TensorMap#structfield.dims).
                #[inline]
                pub fn dims(
                    &self,
                ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, u64>>>
                {
                    self.0.access(2, "TensorMap", "dims")
                }

                /// Getter for the [`strides` field](TensorMap#structfield.strides).
                #[inline]
                pub fn strides(
                    &self,
                ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, u64>>>
                {
                    self.0.access(3, "TensorMap", "strides")
                }

                /// Getter for the [`box_dims` field](TensorMap#structfield.box_dims).
                #[inline]
                pub fn box_dims(
                    &self,
                ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, u32>>>
                {
                    self.0.access(4, "TensorMap", "box_dims")
                }
            }

            impl<'a> ::core::fmt::Debug for TensorMapRef<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("TensorMapRef");
                    f.field("tensor_uid", &self.tensor_uid());
                    f.field("data_type", &self.data_type());
                    if let ::core::option::Option::Some(field_dims) = self.dims().transpose() {
                        f.field("dims", &field_dims);
                    }
                    if let ::core::option::Option::Some(field_strides) = self.strides().transpose()
                    {
                        f.field("strides", &field_strides);
                    }
                    if let ::core::option::Option::Some(field_box_dims) =
                        self.box_dims().transpose()
                    {
                        f.field("box_dims", &field_box_dims);
                    }
                    f.finish()
                }
            }

            impl<'a> ::core::convert::TryFrom<TensorMapRef<'a>> for TensorMap {
                type Error = ::planus::Error;

                #[allow(unreachable_code)]
                fn try_from(value: TensorMapRef<'a>) -> ::planus::Result<Self> {
                    ::core::result::Result::Ok(Self {
                        tensor_uid: ::core::convert::TryInto::try_into(value.tensor_uid()?)?,
                        data_type: ::core::convert::TryInto::try_into(value.data_type()?)?,
                        dims: if let ::core::option::Option::Some(dims) = value.dims()? {
                            ::core::option::Option::Some(dims.to_vec()?)
                        } else {
                            ::core::option::Option::None
                        },
                        strides: if let ::core::option::Option::Some(strides) = value.strides()? {
                            ::core::option::Option::Some(strides.to_vec()?)
                        } else {
                            ::core::option::Option::None
                        },
                        box_dims: if let ::core::option::Option::Some(box_dims) =
                            value.box_dims()?
                        {
                            ::core::option::Option::Some(box_dims.to_vec()?)
                        } else {
                            ::core::option::Option::None
                        },
                    })
                }
            }

            impl<'a> ::planus::TableRead<'a> for TensorMapRef<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    ::core::result::Result::Ok(Self(::planus::table_reader::Table::from_buffer(
                        buffer, offset,
                    )?))
                }
            }

            impl<'a> ::planus::VectorReadInner<'a> for TensorMapRef<'a> {
                type Error = ::planus::Error;
                const STRIDE: usize = 4;

                unsafe fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                        error_kind.with_error_location(
                            "[TensorMapRef]",
                            "get",
                            buffer.offset_from_start,
                        )
                    })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<::planus::Offset<TensorMap>> for TensorMap {
                type Value = ::planus::Offset<TensorMap>;
                const STRIDE: usize = 4;
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                    ::planus::WriteAs::prepare(self, builder)
                }

                #[inline]
                unsafe fn write_values(
                    values: &[::planus::Offset<TensorMap>],
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

            impl<'a> ::planus::ReadAsRoot<'a> for TensorMapRef<'a> {
                fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(
                        ::planus::SliceWithStartOffset {
                            buffer: slice,
                            offset_from_start: 0,
                        },
                        0,
                    )
                    .map_err(|error_kind| {
                        error_kind.with_error_location("[TensorMapRef]", "read_as_root", 0)
                    })
                }
            }

            ///  One kernel launch; launches run in the order listed.
            ///
            /// Generated from these locations:
            /// * Table `Launch` in the file `schemas/cuda_payload.fbs:58`
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
            pub struct Launch {
                ///  Index into `CudaPayload.code_objects` of the module holding `symbol`.
                pub code_object: u32,
                ///  The kernel's `extern "C"` symbol.
                pub symbol: ::core::option::Option<::planus::alloc::string::String>,
                /// The field `grid` in the table `Launch`
                pub grid: ::core::option::Option<self::Dim3>,
                /// The field `block` in the table `Launch`
                pub block: ::core::option::Option<self::Dim3>,
                ///  Dynamic shared memory in bytes.
                pub shared_memory_bytes: u32,
                /// The field `arguments` in the table `Launch`
                pub arguments: ::core::option::Option<::planus::alloc::vec::Vec<self::Argument>>,
                ///  (minor 1) The tensor maps that `TensorMap` arguments name.
                pub tensor_maps: ::core::option::Option<::planus::alloc::vec::Vec<self::TensorMap>>,
                ///  (minor 1) When true, `grid.x` is an upper bound and the load device caps it at its number
                ///  of multiprocessors (a persistent kernel striding over its tiles).
                pub persistent_grid: bool,
                ///  (minor 3) When true, the launch is cooperative (every block resident at once, so that the
                ///  kernel may synchronise its whole grid), and `grid.x` is an upper bound that the load device
                ///  caps at the blocks it can hold at once.
                pub cooperative: bool,
            }

            #[allow(clippy::derivable_impls)]
            impl ::core::default::Default for Launch {
                fn default() -> Self {
                    Self {
                        code_object: 0,
                        symbol: ::core::default::Default::default(),
                        grid: ::core::default::Default::default(),
                        block: ::core::default::Default::default(),
                        shared_memory_bytes: 0,
                        arguments: ::core::default::Default::default(),
                        tensor_maps: ::core::default::Default::default(),
                        persistent_grid: false,
                        cooperative: false,
                    }
                }
            }

            impl Launch {
                /// Creates a [LaunchBuilder] for serializing an instance of this table.
                #[inline]
                pub fn builder() -> LaunchBuilder<()> {
                    LaunchBuilder(())
                }

                #[allow(clippy::too_many_arguments)]
                pub fn create(
                    builder: &mut ::planus::Builder,
                    field_code_object: impl ::planus::WriteAsDefault<u32, u32>,
                    field_symbol: impl ::planus::WriteAsOptional<
                        ::planus::Offset<::core::primitive::str>,
                    >,
                    field_grid: impl ::planus::WriteAsOptional<self::Dim3>,
                    field_block: impl ::planus::WriteAsOptional<self::Dim3>,
                    field_shared_memory_bytes: impl ::planus::WriteAsDefault<u32, u32>,
                    field_arguments: impl ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::Argument>]>,
                    >,
                    field_tensor_maps: impl ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::TensorMap>]>,
                    >,
                    field_persistent_grid: impl ::planus::WriteAsDefault<bool, bool>,
                    field_cooperative: impl ::planus::WriteAsDefault<bool, bool>,
                ) -> ::planus::Offset<Self> {
                    let prepared_code_object = field_code_object.prepare(builder, &0);
                    let prepared_symbol = field_symbol.prepare(builder);
                    let prepared_grid = field_grid.prepare(builder);
                    let prepared_block = field_block.prepare(builder);
                    let prepared_shared_memory_bytes =
                        field_shared_memory_bytes.prepare(builder, &0);
                    let prepared_arguments = field_arguments.prepare(builder);
                    let prepared_tensor_maps = field_tensor_maps.prepare(builder);
                    let prepared_persistent_grid = field_persistent_grid.prepare(builder, &false);
                    let prepared_cooperative = field_cooperative.prepare(builder, &false);

                    let mut table_writer: ::planus::table_writer::TableWriter<22> =
                        ::core::default::Default::default();
                    if prepared_code_object.is_some() {
                        table_writer.write_entry::<u32>(0);
                    }
                    if prepared_symbol.is_some() {
                        table_writer.write_entry::<::planus::Offset<str>>(1);
                    }
                    if prepared_grid.is_some() {
                        table_writer.write_entry::<self::Dim3>(2);
                    }
                    if prepared_block.is_some() {
                        table_writer.write_entry::<self::Dim3>(3);
                    }
                    if prepared_shared_memory_bytes.is_some() {
                        table_writer.write_entry::<u32>(4);
                    }
                    if prepared_arguments.is_some() {
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::Argument>]>>(5);
                    }
                    if prepared_tensor_maps.is_some() {
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::TensorMap>]>>(
                                6,
                            );
                    }
                    if prepared_persistent_grid.is_some() {
                        table_writer.write_entry::<bool>(7);
                    }
                    if prepared_cooperative.is_some() {
                        table_writer.write_entry::<bool>(8);
                    }

                    unsafe {
                        table_writer.finish(builder, |object_writer| {
                            if let ::core::option::Option::Some(prepared_code_object) =
                                prepared_code_object
                            {
                                object_writer.write::<_, _, 4>(&prepared_code_object);
                            }
                            if let ::core::option::Option::Some(prepared_symbol) = prepared_symbol {
                                object_writer.write::<_, _, 4>(&prepared_symbol);
                            }
                            if let ::core::option::Option::Some(prepared_grid) = prepared_grid {
                                object_writer.write::<_, _, 12>(&prepared_grid);
                            }
                            if let ::core::option::Option::Some(prepared_block) = prepared_block {
                                object_writer.write::<_, _, 12>(&prepared_block);
                            }
                            if let ::core::option::Option::Some(prepared_shared_memory_bytes) =
                                prepared_shared_memory_bytes
                            {
                                object_writer.write::<_, _, 4>(&prepared_shared_memory_bytes);
                            }
                            if let ::core::option::Option::Some(prepared_arguments) =
                                prepared_arguments
                            {
                                object_writer.write::<_, _, 4>(&prepared_arguments);
                            }
                            if let ::core::option::Option::Some(prepared_tensor_maps) =
                                prepared_tensor_maps
                            {
                                object_writer.write::<_, _, 4>(&prepared_tensor_maps);
                            }
                            if let ::core::option::Option::Some(prepared_persistent_grid) =
                                prepared_persistent_grid
                            {
                                object_writer.write::<_, _, 1>(&prepared_persistent_grid);
                            }
                            if let ::core::option::Option::Some(prepared_cooperative) =
                                prepared_cooperative
                            {
                                object_writer.write::<_, _, 1>(&prepared_cooperative);
                            }
                        });
                    }
                    builder.current_offset()
                }
            }

            impl ::planus::WriteAs<::planus::Offset<Launch>> for Launch {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Launch> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl ::planus::WriteAsOptional<::planus::Offset<Launch>> for Launch {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<Launch>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl ::planus::WriteAsOffset<Launch> for Launch {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Launch> {
                    Launch::create(
                        builder,
                        self.code_object,
                        &self.symbol,
                        self.grid,
                        self.block,
                        self.shared_memory_bytes,
                        &self.arguments,
                        &self.tensor_maps,
                        self.persistent_grid,
                        self.cooperative,
                    )
                }
            }

            /// Builder for serializing an instance of the [Launch] type.
            ///
            /// Can be created using the [Launch::builder] method.
            #[derive(Debug)]
            #[must_use]
            pub struct LaunchBuilder<State>(State);

            impl LaunchBuilder<()> {
                /// Setter for the [`code_object` field](Launch#structfield.code_object).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn code_object<T0>(self, value: T0) -> LaunchBuilder<(T0,)>
                where
                    T0: ::planus::WriteAsDefault<u32, u32>,
                {
                    LaunchBuilder((value,))
                }

                /// Sets the [`code_object` field](Launch#structfield.code_object) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn code_object_as_default(self) -> LaunchBuilder<(::planus::DefaultValue,)> {
                    self.code_object(::planus::DefaultValue)
                }
            }

            impl<T0> LaunchBuilder<(T0,)> {
                /// Setter for the [`symbol` field](Launch#structfield.symbol).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn symbol<T1>(self, value: T1) -> LaunchBuilder<(T0, T1)>
                where
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                {
                    let (v0,) = self.0;
                    LaunchBuilder((v0, value))
                }

                /// Sets the [`symbol` field](Launch#structfield.symbol) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn symbol_as_null(self) -> LaunchBuilder<(T0, ())> {
                    self.symbol(())
                }
            }

            impl<T0, T1> LaunchBuilder<(T0, T1)> {
                /// Setter for the [`grid` field](Launch#structfield.grid).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn grid<T2>(self, value: T2) -> LaunchBuilder<(T0, T1, T2)>
                where
                    T2: ::planus::WriteAsOptional<self::Dim3>,
                {
                    let (v0, v1) = self.0;
                    LaunchBuilder((v0, v1, value))
                }

                /// Sets the [`grid` field](Launch#structfield.grid) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn grid_as_null(self) -> LaunchBuilder<(T0, T1, ())> {
                    self.grid(())
                }
            }

            impl<T0, T1, T2> LaunchBuilder<(T0, T1, T2)> {
                /// Setter for the [`block` field](Launch#structfield.block).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn block<T3>(self, value: T3) -> LaunchBuilder<(T0, T1, T2, T3)>
                where
                    T3: ::planus::WriteAsOptional<self::Dim3>,
                {
                    let (v0, v1, v2) = self.0;
                    LaunchBuilder((v0, v1, v2, value))
                }

                /// Sets the [`block` field](Launch#structfield.block) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn block_as_null(self) -> LaunchBuilder<(T0, T1, T2, ())> {
                    self.block(())
                }
            }

            impl<T0, T1, T2, T3> LaunchBuilder<(T0, T1, T2, T3)> {
                /// Setter for the [`shared_memory_bytes` field](Launch#structfield.shared_memory_bytes).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn shared_memory_bytes<T4>(
                    self,
                    value: T4,
                ) -> LaunchBuilder<(T0, T1, T2, T3, T4)>
                where
                    T4: ::planus::WriteAsDefault<u32, u32>,
                {
                    let (v0, v1, v2, v3) = self.0;
                    LaunchBuilder((v0, v1, v2, v3, value))
                }

                /// Sets the [`shared_memory_bytes` field](Launch#structfield.shared_memory_bytes) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn shared_memory_bytes_as_default(
                    self,
                ) -> LaunchBuilder<(T0, T1, T2, T3, ::planus::DefaultValue)> {
                    self.shared_memory_bytes(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2, T3, T4> LaunchBuilder<(T0, T1, T2, T3, T4)> {
                /// Setter for the [`arguments` field](Launch#structfield.arguments).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn arguments<T5>(self, value: T5) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5)>
                where
                    T5: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::Argument>]>,
                    >,
                {
                    let (v0, v1, v2, v3, v4) = self.0;
                    LaunchBuilder((v0, v1, v2, v3, v4, value))
                }

                /// Sets the [`arguments` field](Launch#structfield.arguments) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn arguments_as_null(self) -> LaunchBuilder<(T0, T1, T2, T3, T4, ())> {
                    self.arguments(())
                }
            }

            impl<T0, T1, T2, T3, T4, T5> LaunchBuilder<(T0, T1, T2, T3, T4, T5)> {
                /// Setter for the [`tensor_maps` field](Launch#structfield.tensor_maps).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensor_maps<T6>(
                    self,
                    value: T6,
                ) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                where
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::TensorMap>]>,
                    >,
                {
                    let (v0, v1, v2, v3, v4, v5) = self.0;
                    LaunchBuilder((v0, v1, v2, v3, v4, v5, value))
                }

                /// Sets the [`tensor_maps` field](Launch#structfield.tensor_maps) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensor_maps_as_null(self) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5, ())> {
                    self.tensor_maps(())
                }
            }

            impl<T0, T1, T2, T3, T4, T5, T6> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                /// Setter for the [`persistent_grid` field](Launch#structfield.persistent_grid).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn persistent_grid<T7>(
                    self,
                    value: T7,
                ) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                where
                    T7: ::planus::WriteAsDefault<bool, bool>,
                {
                    let (v0, v1, v2, v3, v4, v5, v6) = self.0;
                    LaunchBuilder((v0, v1, v2, v3, v4, v5, v6, value))
                }

                /// Sets the [`persistent_grid` field](Launch#structfield.persistent_grid) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn persistent_grid_as_default(
                    self,
                ) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, ::planus::DefaultValue)>
                {
                    self.persistent_grid(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2, T3, T4, T5, T6, T7> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)> {
                /// Setter for the [`cooperative` field](Launch#structfield.cooperative).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn cooperative<T8>(
                    self,
                    value: T8,
                ) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
                where
                    T8: ::planus::WriteAsDefault<bool, bool>,
                {
                    let (v0, v1, v2, v3, v4, v5, v6, v7) = self.0;
                    LaunchBuilder((v0, v1, v2, v3, v4, v5, v6, v7, value))
                }

                /// Sets the [`cooperative` field](Launch#structfield.cooperative) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn cooperative_as_default(
                    self,
                ) -> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, ::planus::DefaultValue)>
                {
                    self.cooperative(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2, T3, T4, T5, T6, T7, T8> LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)> {
                /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Launch].
                #[inline]
                pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<Launch>
                where
                    Self: ::planus::WriteAsOffset<Launch>,
                {
                    ::planus::WriteAsOffset::prepare(&self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<u32, u32>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T2: ::planus::WriteAsOptional<self::Dim3>,
                    T3: ::planus::WriteAsOptional<self::Dim3>,
                    T4: ::planus::WriteAsDefault<u32, u32>,
                    T5: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Argument>]>>,
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::TensorMap>]>,
                    >,
                    T7: ::planus::WriteAsDefault<bool, bool>,
                    T8: ::planus::WriteAsDefault<bool, bool>,
                > ::planus::WriteAs<::planus::Offset<Launch>>
                for LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
            {
                type Prepared = ::planus::Offset<Launch>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Launch> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<u32, u32>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T2: ::planus::WriteAsOptional<self::Dim3>,
                    T3: ::planus::WriteAsOptional<self::Dim3>,
                    T4: ::planus::WriteAsDefault<u32, u32>,
                    T5: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Argument>]>>,
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::TensorMap>]>,
                    >,
                    T7: ::planus::WriteAsDefault<bool, bool>,
                    T8: ::planus::WriteAsDefault<bool, bool>,
                > ::planus::WriteAsOptional<::planus::Offset<Launch>>
                for LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
            {
                type Prepared = ::planus::Offset<Launch>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<Launch>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<u32, u32>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T2: ::planus::WriteAsOptional<self::Dim3>,
                    T3: ::planus::WriteAsOptional<self::Dim3>,
                    T4: ::planus::WriteAsDefault<u32, u32>,
                    T5: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Argument>]>>,
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::TensorMap>]>,
                    >,
                    T7: ::planus::WriteAsDefault<bool, bool>,
                    T8: ::planus::WriteAsDefault<bool, bool>,
                > ::planus::WriteAsOffset<Launch>
                for LaunchBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
            {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Launch> {
                    let (v0, v1, v2, v3, v4, v5, v6, v7, v8) = &self.0;
                    Launch::create(builder, v0, v1, v2, v3, v4, v5, v6, v7, v8)
                }
            }

            /// Reference to a deserialized [Launch].
            #[derive(Copy, Clone)]
            pub struct LaunchRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

            impl<'a> LaunchRef<'a> {
                /// Getter for the [`code_object` field](Launch#structfield.code_object).
                #[inline]
                pub fn code_object(&self) -> ::planus::Result<u32> {
                    ::core::result::Result::Ok(
                        self.0.access(0, "Launch", "code_object")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`symbol` field](Launch#structfield.symbol).
                #[inline]
                pub fn symbol(
                    &self,
                ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                {
                    self.0.access(1, "Launch", "symbol")
                }

                /// Getter for the [`grid` field](Launch#structfield.grid).
                #[inline]
                pub fn grid(&self) -> ::planus::Result<::core::option::Option<self::Dim3Ref<'a>>> {
                    self.0.access(2, "Launch", "grid")
                }

                /// Getter for the [`block` field](Launch#structfield.block).
                #[inline]
                pub fn block(&self) -> ::planus::Result<::core::option::Option<self::Dim3Ref<'a>>> {
                    self.0.access(3, "Launch", "block")
                }

                /// Getter for the [`shared_memory_bytes` field](Launch#structfield.shared_memory_bytes).
                #[inline]
                pub fn shared_memory_bytes(&self) -> ::planus::Result<u32> {
                    ::core::result::Result::Ok(
                        self.0
                            .access(4, "Launch", "shared_memory_bytes")?
                            .unwrap_or(0),
                    )
                }

                /// Getter for the [`arguments` field](Launch#structfield.arguments).
                #[inline]
                pub fn arguments(
                    &self,
                ) -> ::planus::Result<
                    ::core::option::Option<
                        ::planus::Vector<'a, ::planus::Result<self::ArgumentRef<'a>>>,
                    >,
                > {
                    self.0.access(5, "Launch", "arguments")
                }

                /// Getter for the [`tensor_maps` field](Launch#structfield.tensor_maps).
                #[inline]
                pub fn tensor_maps(
                    &self,
                ) -> ::planus::Result<
                    ::core::option::Option<
                        ::planus::Vector<'a, ::planus::Result<self::TensorMapRef<'a>>>,
                    >,
                > {
                    self.0.access(6, "Launch", "tensor_maps")
                }

                /// Getter for the [`persistent_grid` field](Launch#structfield.persistent_grid).
                #[inline]
                pub fn persistent_grid(&self) -> ::planus::Result<bool> {
                    ::core::result::Result::Ok(
                        self.0
                            .access(7, "Launch", "persistent_grid")?
                            .unwrap_or(false),
                    )
                }

                /// Getter for the [`cooperative` field](Launch#structfield.cooperative).
                #[inline]
                pub fn cooperative(&self) -> ::planus::Result<bool> {
                    ::core::result::Result::Ok(
                        self.0.access(8, "Launch", "cooperative")?.unwrap_or(false),
                    )
                }
            }

            impl<'a> ::core::fmt::Debug for LaunchRef<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("LaunchRef");
                    f.field("code_object", &self.code_object());
                    if let ::core::option::Option::Some(field_symbol) = self.symbol().transpose() {
                        f.field("symbol", &field_symbol);
                    }
                    if let ::core::option::Option::Some(field_grid) = self.grid().transpose() {
                        f.field("grid", &field_grid);
                    }
                    if let ::core::option::Option::Some(field_block) = self.block().transpose() {
                        f.field("block", &field_block);
                    }
                    f.field("shared_memory_bytes", &self.shared_memory_bytes());
                    if let ::core::option::Option::Some(field_arguments) =
                        self.arguments().transpose()
                    {
                        f.field("arguments", &field_arguments);
                    }
                    if let ::core::option::Option::Some(field_tensor_maps) =
                        self.tensor_maps().transpose()
                    {
                        f.field("tensor_maps", &field_tensor_maps);
                    }
                    f.field("persistent_grid", &self.persistent_grid());
                    f.field("cooperative", &self.cooperative());
                    f.finish()
                }
            }

            impl<'a> ::core::convert::TryFrom<LaunchRef<'a>> for Launch {
                type Error = ::planus::Error;

                #[allow(unreachable_code)]
                fn try_from(value: LaunchRef<'a>) -> ::planus::Result<Self> {
                    ::core::result::Result::Ok(Self {
                        code_object: ::core::convert::TryInto::try_into(value.code_object()?)?,
                        symbol: value.symbol()?.map(::core::convert::Into::into),
                        grid: value.grid()?.map(::core::convert::Into::into),
                        block: value.block()?.map(::core::convert::Into::into),
                        shared_memory_bytes: ::core::convert::TryInto::try_into(
                            value.shared_memory_bytes()?,
                        )?,
                        arguments: if let ::core::option::Option::Some(arguments) =
                            value.arguments()?
                        {
                            ::core::option::Option::Some(arguments.to_vec_result()?)
                        } else {
                            ::core::option::Option::None
                        },
                        tensor_maps: if let ::core::option::Option::Some(tensor_maps) =
                            value.tensor_maps()?
                        {
                            ::core::option::Option::Some(tensor_maps.to_vec_result()?)
                        } else {
                            ::core::option::Option::None
                        },
                        persistent_grid: ::core::convert::TryInto::try_into(
                            value.persistent_grid()?,
                        )?,
                        cooperative: ::core::convert::TryInto::try_into(value.cooperative()?)?,
                    })
                }
            }

            impl<'a> ::planus::TableRead<'a> for LaunchRef<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    ::core::result::Result::Ok(Self(::planus::table_reader::Table::from_buffer(
                        buffer, offset,
                    )?))
                }
            }

            impl<'a> ::planus::VectorReadInner<'a> for LaunchRef<'a> {
                type Error = ::planus::Error;
                const STRIDE: usize = 4;

                unsafe fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                        error_kind.with_error_location(
                            "[LaunchRef]",
                            "get",
                            buffer.offset_from_start,
                        )
                    })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<::planus::Offset<Launch>> for Launch {
                type Value = ::planus::Offset<Launch>;
                const STRIDE: usize = 4;
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                    ::planus::WriteAs::prepare(self, builder)
                }

                #[inline]
                unsafe fn write_values(
                    values: &[::planus::Offset<Launch>],
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

            impl<'a> ::planus::ReadAsRoot<'a> for LaunchRef<'a> {
                fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(
                        ::planus::SliceWithStartOffset {
                            buffer: slice,
                            offset_from_start: 0,
                        },
                        0,
                    )
                    .map_err(|error_kind| {
                        error_kind.with_error_location("[LaunchRef]", "read_as_root", 0)
                    })
                }
            }

            ///  A compiled module.
            ///
            /// Generated from these locations:
            /// * Table `CodeObject` in the file `schemas/cuda_payload.fbs:80`
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
            pub struct CodeObject {
                ///  The SM number the cubin was compiled for (90 for sm_90).
                pub target_arch: u32,
                ///  SHA-256 of `cubin` (32 bytes), computed at build from NVRTC's output. Identifies the code
                ///  object; on load the body digest in the header already covers these bytes.
                pub sha256: ::core::option::Option<::planus::alloc::vec::Vec<u8>>,
                ///  The cubin (ELF). Its first byte lies 16-byte aligned relative to the start of the body, so
                ///  the driver can load it in place.
                pub cubin: ::core::option::Option<::planus::alloc::vec::Vec<u8>>,
                ///  Optional: NUL-terminated PTX for newer architectures (empty or absent = none).
                pub ptx: ::core::option::Option<::planus::alloc::vec::Vec<u8>>,
                ///  (minor 1) Compiled for the architecture-specific target (sm_90a for 90): the code runs on
                ///  that exact compute capability only, and its PTX (if any) on no other.
                pub arch_specific: bool,
            }

            #[allow(clippy::derivable_impls)]
            impl ::core::default::Default for CodeObject {
                fn default() -> Self {
                    Self {
                        target_arch: 0,
                        sha256: ::core::default::Default::default(),
                        cubin: ::core::default::Default::default(),
                        ptx: ::core::default::Default::default(),
                        arch_specific: false,
                    }
                }
            }

            impl CodeObject {
                /// Creates a [CodeObjectBuilder] for serializing an instance of this table.
                #[inline]
                pub fn builder() -> CodeObjectBuilder<()> {
                    CodeObjectBuilder(())
                }

                #[allow(clippy::too_many_arguments)]
                pub fn create(
                    builder: &mut ::planus::Builder,
                    field_target_arch: impl ::planus::WriteAsDefault<u32, u32>,
                    field_sha256: impl ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    field_cubin: impl ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    field_ptx: impl ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    field_arch_specific: impl ::planus::WriteAsDefault<bool, bool>,
                ) -> ::planus::Offset<Self> {
                    let prepared_target_arch = field_target_arch.prepare(builder, &0);
                    let prepared_sha256 = field_sha256.prepare(builder);
                    let prepared_cubin = field_cubin.prepare(builder);
                    let prepared_ptx = field_ptx.prepare(builder);
                    let prepared_arch_specific = field_arch_specific.prepare(builder, &false);

                    let mut table_writer: ::planus::table_writer::TableWriter<14> =
                        ::core::default::Default::default();
                    if prepared_target_arch.is_some() {
                        table_writer.write_entry::<u32>(0);
                    }
                    if prepared_sha256.is_some() {
                        table_writer.write_entry::<::planus::Offset<[u8]>>(1);
                    }
                    if prepared_cubin.is_some() {
                        table_writer.write_entry::<::planus::Offset<[u8]>>(2);
                    }
                    if prepared_ptx.is_some() {
                        table_writer.write_entry::<::planus::Offset<[u8]>>(3);
                    }
                    if prepared_arch_specific.is_some() {
                        table_writer.write_entry::<bool>(4);
                    }

                    unsafe {
                        table_writer.finish(builder, |object_writer| {
                            if let ::core::option::Option::Some(prepared_target_arch) =
                                prepared_target_arch
                            {
                                object_writer.write::<_, _, 4>(&prepared_target_arch);
                            }
                            if let ::core::option::Option::Some(prepared_sha256) = prepared_sha256 {
                                object_writer.write::<_, _, 4>(&prepared_sha256);
                            }
                            if let ::core::option::Option::Some(prepared_cubin) = prepared_cubin {
                                object_writer.write::<_, _, 4>(&prepared_cubin);
                            }
                            if let ::core::option::Option::Some(prepared_ptx) = prepared_ptx {
                                object_writer.write::<_, _, 4>(&prepared_ptx);
                            }
                            if let ::core::option::Option::Some(prepared_arch_specific) =
                                prepared_arch_specific
                            {
                                object_writer.write::<_, _, 1>(&prepared_arch_specific);
                            }
                        });
                    }
                    builder.current_offset()
                }
            }

            impl ::planus::WriteAs<::planus::Offset<CodeObject>> for CodeObject {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<CodeObject> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl ::planus::WriteAsOptional<::planus::Offset<CodeObject>> for CodeObject {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<CodeObject>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl ::planus::WriteAsOffset<CodeObject> for CodeObject {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<CodeObject> {
                    CodeObject::create(
                        builder,
                        self.target_arch,
                        &self.sha256,
                        &self.cubin,
                        &self.ptx,
                        self.arch_specific,
                    )
                }
            }

            /// Builder for serializing an instance of the [CodeObject] type.
            ///
            /// Can be created using the [CodeObject::builder] method.
            #[derive(Debug)]
            #[must_use]
            pub struct CodeObjectBuilder<State>(State);

            impl CodeObjectBuilder<()> {
                /// Setter for the [`target_arch` field](CodeObject#structfield.target_arch).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn target_arch<T0>(self, value: T0) -> CodeObjectBuilder<(T0,)>
                where
                    T0: ::planus::WriteAsDefault<u32, u32>,
                {
                    CodeObjectBuilder((value,))
                }

                /// Sets the [`target_arch` field](CodeObject#structfield.target_arch) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn target_arch_as_default(
                    self,
                ) -> CodeObjectBuilder<(::planus::DefaultValue,)> {
                    self.target_arch(::planus::DefaultValue)
                }
            }

            impl<T0> CodeObjectBuilder<(T0,)> {
                /// Setter for the [`sha256` field](CodeObject#structfield.sha256).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn sha256<T1>(self, value: T1) -> CodeObjectBuilder<(T0, T1)>
                where
                    T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                {
                    let (v0,) = self.0;
                    CodeObjectBuilder((v0, value))
                }

                /// Sets the [`sha256` field](CodeObject#structfield.sha256) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn sha256_as_null(self) -> CodeObjectBuilder<(T0, ())> {
                    self.sha256(())
                }
            }

            impl<T0, T1> CodeObjectBuilder<(T0, T1)> {
                /// Setter for the [`cubin` field](CodeObject#structfield.cubin).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn cubin<T2>(self, value: T2) -> CodeObjectBuilder<(T0, T1, T2)>
                where
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                {
                    let (v0, v1) = self.0;
                    CodeObjectBuilder((v0, v1, value))
                }

                /// Sets the [`cubin` field](CodeObject#structfield.cubin) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn cubin_as_null(self) -> CodeObjectBuilder<(T0, T1, ())> {
                    self.cubin(())
                }
            }

            impl<T0, T1, T2> CodeObjectBuilder<(T0, T1, T2)> {
                /// Setter for the [`ptx` field](CodeObject#structfield.ptx).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn ptx<T3>(self, value: T3) -> CodeObjectBuilder<(T0, T1, T2, T3)>
                where
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                {
                    let (v0, v1, v2) = self.0;
                    CodeObjectBuilder((v0, v1, v2, value))
                }

                /// Sets the [`ptx` field](CodeObject#structfield.ptx) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn ptx_as_null(self) -> CodeObjectBuilder<(T0, T1, T2, ())> {
                    self.ptx(())
                }
            }

            impl<T0, T1, T2, T3> CodeObjectBuilder<(T0, T1, T2, T3)> {
                /// Setter for the [`arch_specific` field](CodeObject#structfield.arch_specific).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn arch_specific<T4>(self, value: T4) -> CodeObjectBuilder<(T0, T1, T2, T3, T4)>
                where
                    T4: ::planus::WriteAsDefault<bool, bool>,
                {
                    let (v0, v1, v2, v3) = self.0;
                    CodeObjectBuilder((v0, v1, v2, v3, value))
                }

                /// Sets the [`arch_specific` field](CodeObject#structfield.arch_specific) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn arch_specific_as_default(
                    self,
                ) -> CodeObjectBuilder<(T0, T1, T2, T3, ::planus::DefaultValue)> {
                    self.arch_specific(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2, T3, T4> CodeObjectBuilder<(T0, T1, T2, T3, T4)> {
                /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [CodeObject].
                #[inline]
                pub fn finish(self, builder: &mut ::planus::Builder) -> ::planus::Offset<CodeObject>
                where
                    Self: ::planus::WriteAsOffset<CodeObject>,
                {
                    ::planus::WriteAsOffset::prepare(&self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<u32, u32>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T4: ::planus::WriteAsDefault<bool, bool>,
                > ::planus::WriteAs<::planus::Offset<CodeObject>>
                for CodeObjectBuilder<(T0, T1, T2, T3, T4)>
            {
                type Prepared = ::planus::Offset<CodeObject>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<CodeObject> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<u32, u32>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T4: ::planus::WriteAsDefault<bool, bool>,
                > ::planus::WriteAsOptional<::planus::Offset<CodeObject>>
                for CodeObjectBuilder<(T0, T1, T2, T3, T4)>
            {
                type Prepared = ::planus::Offset<CodeObject>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<CodeObject>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<u32, u32>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T2: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T3: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    T4: ::planus::WriteAsDefault<bool, bool>,
                > ::planus::WriteAsOffset<CodeObject> for CodeObjectBuilder<(T0, T1, T2, T3, T4)>
            {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<CodeObject> {
                    let (v0, v1, v2, v3, v4) = &self.0;
                    CodeObject::create(builder, v0, v1, v2, v3, v4)
                }
            }

            /// Reference to a deserialized [CodeObject].
            #[derive(Copy, Clone)]
            pub struct CodeObjectRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

            impl<'a> CodeObjectRef<'a> {
                /// Getter for the [`target_arch` field](CodeObject#structfield.target_arch).
                #[inline]
                pub fn target_arch(&self) -> ::planus::Result<u32> {
                    ::core::result::Result::Ok(
                        self.0.access(0, "CodeObject", "target_arch")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`sha256` field](CodeObject#structfield.sha256).
                #[inline]
                pub fn sha256(&self) -> ::planus::Result<::core::option::Option<&'a [u8]>> {
                    self.0.access(1, "CodeObject", "sha256")
                }

                /// Getter for the [`cubin` field](CodeObject#structfield.cubin).
                #[inline]
                pub fn cubin(&self) -> ::planus::Result<::core::option::Option<&'a [u8]>> {
                    self.0.access(2, "CodeObject", "cubin")
                }

                /// Getter for the [`ptx` field](CodeObject#structfield.ptx).
                #[inline]
                pub fn ptx(&self) -> ::planus::Result<::core::option::Option<&'a [u8]>> {
                    self.0.access(3, "CodeObject", "ptx")
                }

                /// Getter for the [`arch_specific` field](CodeObject#structfield.arch_specific).
                #[inline]
                pub fn arch_specific(&self) -> ::planus::Result<bool> {
                    ::core::result::Result::Ok(
                        self.0
                            .access(4, "CodeObject", "arch_specific")?
                            .unwrap_or(false),
                    )
                }
            }

            impl<'a> ::core::fmt::Debug for CodeObjectRef<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("CodeObjectRef");
                    f.field("target_arch", &self.target_arch());
                    if let ::core::option::Option::Some(field_sha256) = self.sha256().transpose() {
                        f.field("sha256", &field_sha256);
                    }
                    if let ::core::option::Option::Some(field_cubin) = self.cubin().transpose() {
                        f.field("cubin", &field_cubin);
                    }
                    if let ::core::option::Option::Some(field_ptx) = self.ptx().transpose() {
                        f.field("ptx", &field_ptx);
                    }
                    f.field("arch_specific", &self.arch_specific());
                    f.finish()
                }
            }

            impl<'a> ::core::convert::TryFrom<CodeObjectRef<'a>> for CodeObject {
                type Error = ::planus::Error;

                #[allow(unreachable_code)]
                fn try_from(value: CodeObjectRef<'a>) -> ::planus::Result<Self> {
                    ::core::result::Result::Ok(Self {
                        target_arch: ::core::convert::TryInto::try_into(value.target_arch()?)?,
                        sha256: value.sha256()?.map(|v| v.to_vec()),
                        cubin: value.cubin()?.map(|v| v.to_vec()),
                        ptx: value.ptx()?.map(|v| v.to_vec()),
                        arch_specific: ::core::convert::TryInto::try_into(value.arch_specific()?)?,
                    })
                }
            }

            impl<'a> ::planus::TableRead<'a> for CodeObjectRef<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    ::core::result::Result::Ok(Self(::planus::table_reader::Table::from_buffer(
                        buffer, offset,
                    )?))
                }
            }

            impl<'a> ::planus::VectorReadInner<'a> for CodeObjectRef<'a> {
                type Error = ::planus::Error;
                const STRIDE: usize = 4;

                unsafe fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                        error_kind.with_error_location(
                            "[CodeObjectRef]",
                            "get",
                            buffer.offset_from_start,
                        )
                    })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<::planus::Offset<CodeObject>> for CodeObject {
                type Value = ::planus::Offset<CodeObject>;
                const STRIDE: usize = 4;
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                    ::planus::WriteAs::prepare(self, builder)
                }

                #[inline]
                unsafe fn write_values(
                    values: &[::planus::Offset<CodeObject>],
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

            impl<'a> ::planus::ReadAsRoot<'a> for CodeObjectRef<'a> {
                fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(
                        ::planus::SliceWithStartOffset {
                            buffer: slice,
                            offset_from_start: 0,
                        },
                        0,
                    )
                    .map_err(|error_kind| {
                        error_kind.with_error_location("[CodeObjectRef]", "read_as_root", 0)
                    })
                }
            }

            ///  A bound tensor of the plan.
            ///
            /// Generated from these locations:
            /// * Table `Tensor` in the file `schemas/cuda_payload.fbs:97`
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
            pub struct Tensor {
                /// The field `uid` in the table `Tensor`
                pub uid: i64,
                ///  kiln-core's data type code: 0 f32, 1 f16, 2 bf16.
                pub data_type: u8,
                ///  Bytes the tensor's layout spans.
                pub storage_bytes: u64,
            }

            #[allow(clippy::derivable_impls)]
            impl ::core::default::Default for Tensor {
                fn default() -> Self {
                    Self {
                        uid: 0,
                        data_type: 0,
                        storage_bytes: 0,
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
                    field_data_type: impl ::planus::WriteAsDefault<u8, u8>,
                    field_storage_bytes: impl ::planus::WriteAsDefault<u64, u64>,
                ) -> ::planus::Offset<Self> {
                    let prepared_uid = field_uid.prepare(builder, &0);
                    let prepared_data_type = field_data_type.prepare(builder, &0);
                    let prepared_storage_bytes = field_storage_bytes.prepare(builder, &0);

                    let mut table_writer: ::planus::table_writer::TableWriter<10> =
                        ::core::default::Default::default();
                    if prepared_uid.is_some() {
                        table_writer.write_entry::<i64>(0);
                    }
                    if prepared_storage_bytes.is_some() {
                        table_writer.write_entry::<u64>(2);
                    }
                    if prepared_data_type.is_some() {
                        table_writer.write_entry::<u8>(1);
                    }

                    unsafe {
                        table_writer.finish(builder, |object_writer| {
                            if let ::core::option::Option::Some(prepared_uid) = prepared_uid {
                                object_writer.write::<_, _, 8>(&prepared_uid);
                            }
                            if let ::core::option::Option::Some(prepared_storage_bytes) =
                                prepared_storage_bytes
                            {
                                object_writer.write::<_, _, 8>(&prepared_storage_bytes);
                            }
                            if let ::core::option::Option::Some(prepared_data_type) =
                                prepared_data_type
                            {
                                object_writer.write::<_, _, 1>(&prepared_data_type);
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
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl ::planus::WriteAsOffset<Tensor> for Tensor {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                    Tensor::create(builder, self.uid, self.data_type, self.storage_bytes)
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
                /// Setter for the [`data_type` field](Tensor#structfield.data_type).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn data_type<T1>(self, value: T1) -> TensorBuilder<(T0, T1)>
                where
                    T1: ::planus::WriteAsDefault<u8, u8>,
                {
                    let (v0,) = self.0;
                    TensorBuilder((v0, value))
                }

                /// Sets the [`data_type` field](Tensor#structfield.data_type) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn data_type_as_default(self) -> TensorBuilder<(T0, ::planus::DefaultValue)> {
                    self.data_type(::planus::DefaultValue)
                }
            }

            impl<T0, T1> TensorBuilder<(T0, T1)> {
                /// Setter for the [`storage_bytes` field](Tensor#structfield.storage_bytes).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn storage_bytes<T2>(self, value: T2) -> TensorBuilder<(T0, T1, T2)>
                where
                    T2: ::planus::WriteAsDefault<u64, u64>,
                {
                    let (v0, v1) = self.0;
                    TensorBuilder((v0, v1, value))
                }

                /// Sets the [`storage_bytes` field](Tensor#structfield.storage_bytes) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn storage_bytes_as_default(
                    self,
                ) -> TensorBuilder<(T0, T1, ::planus::DefaultValue)> {
                    self.storage_bytes(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2> TensorBuilder<(T0, T1, T2)> {
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
                    T1: ::planus::WriteAsDefault<u8, u8>,
                    T2: ::planus::WriteAsDefault<u64, u64>,
                > ::planus::WriteAs<::planus::Offset<Tensor>> for TensorBuilder<(T0, T1, T2)>
            {
                type Prepared = ::planus::Offset<Tensor>;

                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<i64, i64>,
                    T1: ::planus::WriteAsDefault<u8, u8>,
                    T2: ::planus::WriteAsDefault<u64, u64>,
                > ::planus::WriteAsOptional<::planus::Offset<Tensor>>
                for TensorBuilder<(T0, T1, T2)>
            {
                type Prepared = ::planus::Offset<Tensor>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<Tensor>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl<
                    T0: ::planus::WriteAsDefault<i64, i64>,
                    T1: ::planus::WriteAsDefault<u8, u8>,
                    T2: ::planus::WriteAsDefault<u64, u64>,
                > ::planus::WriteAsOffset<Tensor> for TensorBuilder<(T0, T1, T2)>
            {
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> ::planus::Offset<Tensor> {
                    let (v0, v1, v2) = &self.0;
                    Tensor::create(builder, v0, v1, v2)
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

                /// Getter for the [`data_type` field](Tensor#structfield.data_type).
                #[inline]
                pub fn data_type(&self) -> ::planus::Result<u8> {
                    ::core::result::Result::Ok(
                        self.0.access(1, "Tensor", "data_type")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`storage_bytes` field](Tensor#structfield.storage_bytes).
                #[inline]
                pub fn storage_bytes(&self) -> ::planus::Result<u64> {
                    ::core::result::Result::Ok(
                        self.0.access(2, "Tensor", "storage_bytes")?.unwrap_or(0),
                    )
                }
            }

            impl<'a> ::core::fmt::Debug for TensorRef<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("TensorRef");
                    f.field("uid", &self.uid());
                    f.field("data_type", &self.data_type());
                    f.field("storage_bytes", &self.storage_bytes());
                    f.finish()
                }
            }

            impl<'a> ::core::convert::TryFrom<TensorRef<'a>> for Tensor {
                type Error = ::planus::Error;

                #[allow(unreachable_code)]
                fn try_from(value: TensorRef<'a>) -> ::planus::Result<Self> {
                    ::core::result::Result::Ok(Self {
                        uid: ::core::convert::TryInto::try_into(value.uid()?)?,
                        data_type: ::core::convert::TryInto::try_into(value.data_type()?)?,
                        storage_bytes: ::core::convert::TryInto::try_into(value.storage_bytes()?)?,
                    })
                }
            }

            impl<'a> ::planus::TableRead<'a> for TensorRef<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    ::core::result::Result::Ok(Self(::planus::table_reader::Table::from_buffer(
                        buffer, offset,
                    )?))
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

            /// The table `CudaPayload` in the namespace `kiln.cuda`
            ///
            /// Generated from these locations:
            /// * Table `CudaPayload` in the file `schemas/cuda_payload.fbs:105`
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
            pub struct CudaPayload {
                ///  The engine's versioned name, e.g. KILN_CUDA_CONV_FPROP_V1.
                pub engine_name: ::core::option::Option<::planus::alloc::string::String>,
                ///  Version of the provider that built the plan (diagnostic only).
                pub provider_version: ::core::option::Option<::planus::alloc::string::String>,
                ///  NVRTC version that compiled the code objects (diagnostic only).
                pub nvrtc_major: u32,
                /// The field `nvrtc_minor` in the table `CudaPayload`
                pub nvrtc_minor: u32,
                ///  Workspace bytes the plan needs at execute.
                pub workspace_size: u64,
                /// The field `tensors` in the table `CudaPayload`
                pub tensors: ::core::option::Option<::planus::alloc::vec::Vec<self::Tensor>>,
                /// The field `code_objects` in the table `CudaPayload`
                pub code_objects:
                    ::core::option::Option<::planus::alloc::vec::Vec<self::CodeObject>>,
                /// The field `launches` in the table `CudaPayload`
                pub launches: ::core::option::Option<::planus::alloc::vec::Vec<self::Launch>>,
            }

            #[allow(clippy::derivable_impls)]
            impl ::core::default::Default for CudaPayload {
                fn default() -> Self {
                    Self {
                        engine_name: ::core::default::Default::default(),
                        provider_version: ::core::default::Default::default(),
                        nvrtc_major: 0,
                        nvrtc_minor: 0,
                        workspace_size: 0,
                        tensors: ::core::default::Default::default(),
                        code_objects: ::core::default::Default::default(),
                        launches: ::core::default::Default::default(),
                    }
                }
            }

            impl CudaPayload {
                /// Creates a [CudaPayloadBuilder] for serializing an instance of this table.
                #[inline]
                pub fn builder() -> CudaPayloadBuilder<()> {
                    CudaPayloadBuilder(())
                }

                #[allow(clippy::too_many_arguments)]
                pub fn create(
                    builder: &mut ::planus::Builder,
                    field_engine_name: impl ::planus::WriteAsOptional<
                        ::planus::Offset<::core::primitive::str>,
                    >,
                    field_provider_version: impl ::planus::WriteAsOptional<
                        ::planus::Offset<::core::primitive::str>,
                    >,
                    field_nvrtc_major: impl ::planus::WriteAsDefault<u32, u32>,
                    field_nvrtc_minor: impl ::planus::WriteAsDefault<u32, u32>,
                    field_workspace_size: impl ::planus::WriteAsDefault<u64, u64>,
                    field_tensors: impl ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::Tensor>]>,
                    >,
                    field_code_objects: impl ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::CodeObject>]>,
                    >,
                    field_launches: impl ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::Launch>]>,
                    >,
                ) -> ::planus::Offset<Self> {
                    let prepared_engine_name = field_engine_name.prepare(builder);
                    let prepared_provider_version = field_provider_version.prepare(builder);
                    let prepared_nvrtc_major = field_nvrtc_major.prepare(builder, &0);
                    let prepared_nvrtc_minor = field_nvrtc_minor.prepare(builder, &0);
                    let prepared_workspace_size = field_workspace_size.prepare(builder, &0);
                    let prepared_tensors = field_tensors.prepare(builder);
                    let prepared_code_objects = field_code_objects.prepare(builder);
                    let prepared_launches = field_launches.prepare(builder);

                    let mut table_writer: ::planus::table_writer::TableWriter<20> =
                        ::core::default::Default::default();
                    if prepared_workspace_size.is_some() {
                        table_writer.write_entry::<u64>(4);
                    }
                    if prepared_engine_name.is_some() {
                        table_writer.write_entry::<::planus::Offset<str>>(0);
                    }
                    if prepared_provider_version.is_some() {
                        table_writer.write_entry::<::planus::Offset<str>>(1);
                    }
                    if prepared_nvrtc_major.is_some() {
                        table_writer.write_entry::<u32>(2);
                    }
                    if prepared_nvrtc_minor.is_some() {
                        table_writer.write_entry::<u32>(3);
                    }
                    if prepared_tensors.is_some() {
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::Tensor>]>>(5);
                    }
                    if prepared_code_objects.is_some() {
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::CodeObject>]>>(
                                6,
                            );
                    }
                    if prepared_launches.is_some() {
                        table_writer
                            .write_entry::<::planus::Offset<[::planus::Offset<self::Launch>]>>(7);
                    }

                    unsafe {
                        table_writer.finish(builder, |object_writer| {
                            if let ::core::option::Option::Some(prepared_workspace_size) =
                                prepared_workspace_size
                            {
                                object_writer.write::<_, _, 8>(&prepared_workspace_size);
                            }
                            if let ::core::option::Option::Some(prepared_engine_name) =
                                prepared_engine_name
                            {
                                object_writer.write::<_, _, 4>(&prepared_engine_name);
                            }
                            if let ::core::option::Option::Some(prepared_provider_version) =
                                prepared_provider_version
                            {
                                object_writer.write::<_, _, 4>(&prepared_provider_version);
                            }
                            if let ::core::option::Option::Some(prepared_nvrtc_major) =
                                prepared_nvrtc_major
                            {
                                object_writer.write::<_, _, 4>(&prepared_nvrtc_major);
                            }
                            if let ::core::option::Option::Some(prepared_nvrtc_minor) =
                                prepared_nvrtc_minor
                            {
                                object_writer.write::<_, _, 4>(&prepared_nvrtc_minor);
                            }
                            if let ::core::option::Option::Some(prepared_tensors) = prepared_tensors
                            {
                                object_writer.write::<_, _, 4>(&prepared_tensors);
                            }
                            if let ::core::option::Option::Some(prepared_code_objects) =
                                prepared_code_objects
                            {
                                object_writer.write::<_, _, 4>(&prepared_code_objects);
                            }
                            if let ::core::option::Option::Some(prepared_launches) =
                                prepared_launches
                            {
                                object_writer.write::<_, _, 4>(&prepared_launches);
                            }
                        });
                    }
                    builder.current_offset()
                }
            }

            impl ::planus::WriteAs<::planus::Offset<CudaPayload>> for CudaPayload {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::planus::Offset<CudaPayload> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl ::planus::WriteAsOptional<::planus::Offset<CudaPayload>> for CudaPayload {
                type Prepared = ::planus::Offset<Self>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<CudaPayload>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl ::planus::WriteAsOffset<CudaPayload> for CudaPayload {
                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::planus::Offset<CudaPayload> {
                    CudaPayload::create(
                        builder,
                        &self.engine_name,
                        &self.provider_version,
                        self.nvrtc_major,
                        self.nvrtc_minor,
                        self.workspace_size,
                        &self.tensors,
                        &self.code_objects,
                        &self.launches,
                    )
                }
            }

            /// Builder for serializing an instance of the [CudaPayload] type.
            ///
            /// Can be created using the [CudaPayload::builder] method.
            #[derive(Debug)]
            #[must_use]
            pub struct CudaPayloadBuilder<State>(State);

            impl CudaPayloadBuilder<()> {
                /// Setter for the [`engine_name` field](CudaPayload#structfield.engine_name).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn engine_name<T0>(self, value: T0) -> CudaPayloadBuilder<(T0,)>
                where
                    T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                {
                    CudaPayloadBuilder((value,))
                }

                /// Sets the [`engine_name` field](CudaPayload#structfield.engine_name) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn engine_name_as_null(self) -> CudaPayloadBuilder<((),)> {
                    self.engine_name(())
                }
            }

            impl<T0> CudaPayloadBuilder<(T0,)> {
                /// Setter for the [`provider_version` field](CudaPayload#structfield.provider_version).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn provider_version<T1>(self, value: T1) -> CudaPayloadBuilder<(T0, T1)>
                where
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                {
                    let (v0,) = self.0;
                    CudaPayloadBuilder((v0, value))
                }

                /// Sets the [`provider_version` field](CudaPayload#structfield.provider_version) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn provider_version_as_null(self) -> CudaPayloadBuilder<(T0, ())> {
                    self.provider_version(())
                }
            }

            impl<T0, T1> CudaPayloadBuilder<(T0, T1)> {
                /// Setter for the [`nvrtc_major` field](CudaPayload#structfield.nvrtc_major).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn nvrtc_major<T2>(self, value: T2) -> CudaPayloadBuilder<(T0, T1, T2)>
                where
                    T2: ::planus::WriteAsDefault<u32, u32>,
                {
                    let (v0, v1) = self.0;
                    CudaPayloadBuilder((v0, v1, value))
                }

                /// Sets the [`nvrtc_major` field](CudaPayload#structfield.nvrtc_major) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn nvrtc_major_as_default(
                    self,
                ) -> CudaPayloadBuilder<(T0, T1, ::planus::DefaultValue)> {
                    self.nvrtc_major(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2> CudaPayloadBuilder<(T0, T1, T2)> {
                /// Setter for the [`nvrtc_minor` field](CudaPayload#structfield.nvrtc_minor).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn nvrtc_minor<T3>(self, value: T3) -> CudaPayloadBuilder<(T0, T1, T2, T3)>
                where
                    T3: ::planus::WriteAsDefault<u32, u32>,
                {
                    let (v0, v1, v2) = self.0;
                    CudaPayloadBuilder((v0, v1, v2, value))
                }

                /// Sets the [`nvrtc_minor` field](CudaPayload#structfield.nvrtc_minor) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn nvrtc_minor_as_default(
                    self,
                ) -> CudaPayloadBuilder<(T0, T1, T2, ::planus::DefaultValue)> {
                    self.nvrtc_minor(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2, T3> CudaPayloadBuilder<(T0, T1, T2, T3)> {
                /// Setter for the [`workspace_size` field](CudaPayload#structfield.workspace_size).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn workspace_size<T4>(
                    self,
                    value: T4,
                ) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4)>
                where
                    T4: ::planus::WriteAsDefault<u64, u64>,
                {
                    let (v0, v1, v2, v3) = self.0;
                    CudaPayloadBuilder((v0, v1, v2, v3, value))
                }

                /// Sets the [`workspace_size` field](CudaPayload#structfield.workspace_size) to the default value.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn workspace_size_as_default(
                    self,
                ) -> CudaPayloadBuilder<(T0, T1, T2, T3, ::planus::DefaultValue)> {
                    self.workspace_size(::planus::DefaultValue)
                }
            }

            impl<T0, T1, T2, T3, T4> CudaPayloadBuilder<(T0, T1, T2, T3, T4)> {
                /// Setter for the [`tensors` field](CudaPayload#structfield.tensors).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensors<T5>(self, value: T5) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5)>
                where
                    T5: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::Tensor>]>,
                    >,
                {
                    let (v0, v1, v2, v3, v4) = self.0;
                    CudaPayloadBuilder((v0, v1, v2, v3, v4, value))
                }

                /// Sets the [`tensors` field](CudaPayload#structfield.tensors) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn tensors_as_null(self) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4, ())> {
                    self.tensors(())
                }
            }

            impl<T0, T1, T2, T3, T4, T5> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5)> {
                /// Setter for the [`code_objects` field](CudaPayload#structfield.code_objects).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn code_objects<T6>(
                    self,
                    value: T6,
                ) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                where
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::CodeObject>]>,
                    >,
                {
                    let (v0, v1, v2, v3, v4, v5) = self.0;
                    CudaPayloadBuilder((v0, v1, v2, v3, v4, v5, value))
                }

                /// Sets the [`code_objects` field](CudaPayload#structfield.code_objects) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn code_objects_as_null(
                    self,
                ) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, ())> {
                    self.code_objects(())
                }
            }

            impl<T0, T1, T2, T3, T4, T5, T6> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                /// Setter for the [`launches` field](CudaPayload#structfield.launches).
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn launches<T7>(
                    self,
                    value: T7,
                ) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                where
                    T7: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::Launch>]>,
                    >,
                {
                    let (v0, v1, v2, v3, v4, v5, v6) = self.0;
                    CudaPayloadBuilder((v0, v1, v2, v3, v4, v5, v6, value))
                }

                /// Sets the [`launches` field](CudaPayload#structfield.launches) to null.
                #[inline]
                #[allow(clippy::type_complexity)]
                pub fn launches_as_null(
                    self,
                ) -> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6, ())> {
                    self.launches(())
                }
            }

            impl<T0, T1, T2, T3, T4, T5, T6, T7> CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)> {
                /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [CudaPayload].
                #[inline]
                pub fn finish(
                    self,
                    builder: &mut ::planus::Builder,
                ) -> ::planus::Offset<CudaPayload>
                where
                    Self: ::planus::WriteAsOffset<CudaPayload>,
                {
                    ::planus::WriteAsOffset::prepare(&self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T2: ::planus::WriteAsDefault<u32, u32>,
                    T3: ::planus::WriteAsDefault<u32, u32>,
                    T4: ::planus::WriteAsDefault<u64, u64>,
                    T5: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::CodeObject>]>,
                    >,
                    T7: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Launch>]>>,
                > ::planus::WriteAs<::planus::Offset<CudaPayload>>
                for CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
            {
                type Prepared = ::planus::Offset<CudaPayload>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::planus::Offset<CudaPayload> {
                    ::planus::WriteAsOffset::prepare(self, builder)
                }
            }

            impl<
                    T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T2: ::planus::WriteAsDefault<u32, u32>,
                    T3: ::planus::WriteAsDefault<u32, u32>,
                    T4: ::planus::WriteAsDefault<u64, u64>,
                    T5: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::CodeObject>]>,
                    >,
                    T7: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Launch>]>>,
                > ::planus::WriteAsOptional<::planus::Offset<CudaPayload>>
                for CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
            {
                type Prepared = ::planus::Offset<CudaPayload>;

                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::core::option::Option<::planus::Offset<CudaPayload>> {
                    ::core::option::Option::Some(::planus::WriteAsOffset::prepare(self, builder))
                }
            }

            impl<
                    T0: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T1: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    T2: ::planus::WriteAsDefault<u32, u32>,
                    T3: ::planus::WriteAsDefault<u32, u32>,
                    T4: ::planus::WriteAsDefault<u64, u64>,
                    T5: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Tensor>]>>,
                    T6: ::planus::WriteAsOptional<
                        ::planus::Offset<[::planus::Offset<self::CodeObject>]>,
                    >,
                    T7: ::planus::WriteAsOptional<::planus::Offset<[::planus::Offset<self::Launch>]>>,
                > ::planus::WriteAsOffset<CudaPayload>
                for CudaPayloadBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
            {
                #[inline]
                fn prepare(
                    &self,
                    builder: &mut ::planus::Builder,
                ) -> ::planus::Offset<CudaPayload> {
                    let (v0, v1, v2, v3, v4, v5, v6, v7) = &self.0;
                    CudaPayload::create(builder, v0, v1, v2, v3, v4, v5, v6, v7)
                }
            }

            /// Reference to a deserialized [CudaPayload].
            #[derive(Copy, Clone)]
            pub struct CudaPayloadRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

            impl<'a> CudaPayloadRef<'a> {
                /// Getter for the [`engine_name` field](CudaPayload#structfield.engine_name).
                #[inline]
                pub fn engine_name(
                    &self,
                ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                {
                    self.0.access(0, "CudaPayload", "engine_name")
                }

                /// Getter for the [`provider_version` field](CudaPayload#structfield.provider_version).
                #[inline]
                pub fn provider_version(
                    &self,
                ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                {
                    self.0.access(1, "CudaPayload", "provider_version")
                }

                /// Getter for the [`nvrtc_major` field](CudaPayload#structfield.nvrtc_major).
                #[inline]
                pub fn nvrtc_major(&self) -> ::planus::Result<u32> {
                    ::core::result::Result::Ok(
                        self.0.access(2, "CudaPayload", "nvrtc_major")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`nvrtc_minor` field](CudaPayload#structfield.nvrtc_minor).
                #[inline]
                pub fn nvrtc_minor(&self) -> ::planus::Result<u32> {
                    ::core::result::Result::Ok(
                        self.0.access(3, "CudaPayload", "nvrtc_minor")?.unwrap_or(0),
                    )
                }

                /// Getter for the [`workspace_size` field](CudaPayload#structfield.workspace_size).
                #[inline]
                pub fn workspace_size(&self) -> ::planus::Result<u64> {
                    ::core::result::Result::Ok(
                        self.0
                            .access(4, "CudaPayload", "workspace_size")?
                            .unwrap_or(0),
                    )
                }

                /// Getter for the [`tensors` field](CudaPayload#structfield.tensors).
                #[inline]
                pub fn tensors(
                    &self,
                ) -> ::planus::Result<
                    ::core::option::Option<
                        ::planus::Vector<'a, ::planus::Result<self::TensorRef<'a>>>,
                    >,
                > {
                    self.0.access(5, "CudaPayload", "tensors")
                }

                /// Getter for the [`code_objects` field](CudaPayload#structfield.code_objects).
                #[inline]
                pub fn code_objects(
                    &self,
                ) -> ::planus::Result<
                    ::core::option::Option<
                        ::planus::Vector<'a, ::planus::Result<self::CodeObjectRef<'a>>>,
                    >,
                > {
                    self.0.access(6, "CudaPayload", "code_objects")
                }

                /// Getter for the [`launches` field](CudaPayload#structfield.launches).
                #[inline]
                pub fn launches(
                    &self,
                ) -> ::planus::Result<
                    ::core::option::Option<
                        ::planus::Vector<'a, ::planus::Result<self::LaunchRef<'a>>>,
                    >,
                > {
                    self.0.access(7, "CudaPayload", "launches")
                }
            }

            impl<'a> ::core::fmt::Debug for CudaPayloadRef<'a> {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    let mut f = f.debug_struct("CudaPayloadRef");
                    if let ::core::option::Option::Some(field_engine_name) =
                        self.engine_name().transpose()
                    {
                        f.field("engine_name", &field_engine_name);
                    }
                    if let ::core::option::Option::Some(field_provider_version) =
                        self.provider_version().transpose()
                    {
                        f.field("provider_version", &field_provider_version);
                    }
                    f.field("nvrtc_major", &self.nvrtc_major());
                    f.field("nvrtc_minor", &self.nvrtc_minor());
                    f.field("workspace_size", &self.workspace_size());
                    if let ::core::option::Option::Some(field_tensors) = self.tensors().transpose()
                    {
                        f.field("tensors", &field_tensors);
                    }
                    if let ::core::option::Option::Some(field_code_objects) =
                        self.code_objects().transpose()
                    {
                        f.field("code_objects", &field_code_objects);
                    }
                    if let ::core::option::Option::Some(field_launches) =
                        self.launches().transpose()
                    {
                        f.field("launches", &field_launches);
                    }
                    f.finish()
                }
            }

            impl<'a> ::core::convert::TryFrom<CudaPayloadRef<'a>> for CudaPayload {
                type Error = ::planus::Error;

                #[allow(unreachable_code)]
                fn try_from(value: CudaPayloadRef<'a>) -> ::planus::Result<Self> {
                    ::core::result::Result::Ok(Self {
                        engine_name: value.engine_name()?.map(::core::convert::Into::into),
                        provider_version: value
                            .provider_version()?
                            .map(::core::convert::Into::into),
                        nvrtc_major: ::core::convert::TryInto::try_into(value.nvrtc_major()?)?,
                        nvrtc_minor: ::core::convert::TryInto::try_into(value.nvrtc_minor()?)?,
                        workspace_size: ::core::convert::TryInto::try_into(
                            value.workspace_size()?,
                        )?,
                        tensors: if let ::core::option::Option::Some(tensors) = value.tensors()? {
                            ::core::option::Option::Some(tensors.to_vec_result()?)
                        } else {
                            ::core::option::Option::None
                        },
                        code_objects: if let ::core::option::Option::Some(code_objects) =
                            value.code_objects()?
                        {
                            ::core::option::Option::Some(code_objects.to_vec_result()?)
                        } else {
                            ::core::option::Option::None
                        },
                        launches: if let ::core::option::Option::Some(launches) =
                            value.launches()?
                        {
                            ::core::option::Option::Some(launches.to_vec_result()?)
                        } else {
                            ::core::option::Option::None
                        },
                    })
                }
            }

            impl<'a> ::planus::TableRead<'a> for CudaPayloadRef<'a> {
                #[inline]
                fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::core::result::Result<Self, ::planus::errors::ErrorKind> {
                    ::core::result::Result::Ok(Self(::planus::table_reader::Table::from_buffer(
                        buffer, offset,
                    )?))
                }
            }

            impl<'a> ::planus::VectorReadInner<'a> for CudaPayloadRef<'a> {
                type Error = ::planus::Error;
                const STRIDE: usize = 4;

                unsafe fn from_buffer(
                    buffer: ::planus::SliceWithStartOffset<'a>,
                    offset: usize,
                ) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                        error_kind.with_error_location(
                            "[CudaPayloadRef]",
                            "get",
                            buffer.offset_from_start,
                        )
                    })
                }
            }

            /// # Safety
            /// The planus compiler generates implementations that initialize
            /// the bytes in `write_values`.
            unsafe impl ::planus::VectorWrite<::planus::Offset<CudaPayload>> for CudaPayload {
                type Value = ::planus::Offset<CudaPayload>;
                const STRIDE: usize = 4;
                #[inline]
                fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                    ::planus::WriteAs::prepare(self, builder)
                }

                #[inline]
                unsafe fn write_values(
                    values: &[::planus::Offset<CudaPayload>],
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

            impl<'a> ::planus::ReadAsRoot<'a> for CudaPayloadRef<'a> {
                fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                    ::planus::TableRead::from_buffer(
                        ::planus::SliceWithStartOffset {
                            buffer: slice,
                            offset_from_start: 0,
                        },
                        0,
                    )
                    .map_err(|error_kind| {
                        error_kind.with_error_location("[CudaPayloadRef]", "read_as_root", 0)
                    })
                }
            }
        }
    }
}
