pub use root::*;

const _: () = ::planus::check_version_compatibility("planus-1.3.0");

/// The root namespace
///
/// Generated from these locations:
/// * File `schemas/plan.fbs`
#[no_implicit_prelude]
#[allow(clippy::needless_lifetimes)]
mod root {
    /// The namespace `kiln`
    ///
    /// Generated from these locations:
    /// * File `schemas/plan.fbs`
    pub mod kiln {
        /// The namespace `kiln.fb`
        ///
        /// Generated from these locations:
        /// * File `schemas/plan.fbs`
        pub mod fb {
            /// The namespace `kiln.fb.plan`
            ///
            /// Generated from these locations:
            /// * File `schemas/plan.fbs`
            pub mod plan {
                ///  The layout a plan was built for, of one tensor bound at execute.
                ///
                /// Generated from these locations:
                /// * Table `TensorLayout` in the file `schemas/plan.fbs:11`
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
                pub struct TensorLayout {
                    /// The field `uid` in the table `TensorLayout`
                    pub uid: i64,
                    ///  kiln-core's data type code: 0 f32, 1 f16, 2 bf16, 3 f64.
                    pub data_type: u8,
                    ///  Logical dims.
                    pub dims: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    ///  Strides in elements, one per dim.
                    pub strides: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for TensorLayout {
                    fn default() -> Self {
                        Self {
                            uid: 0,
                            data_type: 0,
                            dims: ::core::default::Default::default(),
                            strides: ::core::default::Default::default(),
                        }
                    }
                }

                impl TensorLayout {
                    /// Creates a [TensorLayoutBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> TensorLayoutBuilder<()> {
                        TensorLayoutBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_uid: impl ::planus::WriteAsDefault<i64, i64>,
                        field_data_type: impl ::planus::WriteAsDefault<u8, u8>,
                        field_dims: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_strides: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_uid = field_uid.prepare(builder, &0);
                        let prepared_data_type = field_data_type.prepare(builder, &0);
                        let prepared_dims = field_dims.prepare(builder);
                        let prepared_strides = field_strides.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<12> =
                            ::core::default::Default::default();
                        if prepared_uid.is_some() {
                            table_writer.write_entry::<i64>(0);
                        }
                        if prepared_dims.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(2);
                        }
                        if prepared_strides.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(3);
                        }
                        if prepared_data_type.is_some() {
                            table_writer.write_entry::<u8>(1);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_uid) = prepared_uid {
                                    object_writer.write::<_, _, 8>(&prepared_uid);
                                }
                                if let ::core::option::Option::Some(prepared_dims) = prepared_dims {
                                    object_writer.write::<_, _, 4>(&prepared_dims);
                                }
                                if let ::core::option::Option::Some(prepared_strides) =
                                    prepared_strides
                                {
                                    object_writer.write::<_, _, 4>(&prepared_strides);
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

                impl ::planus::WriteAs<::planus::Offset<TensorLayout>> for TensorLayout {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<TensorLayout> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<TensorLayout>> for TensorLayout {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<TensorLayout>>
                    {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<TensorLayout> for TensorLayout {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<TensorLayout> {
                        TensorLayout::create(
                            builder,
                            self.uid,
                            self.data_type,
                            &self.dims,
                            &self.strides,
                        )
                    }
                }

                /// Builder for serializing an instance of the [TensorLayout] type.
                ///
                /// Can be created using the [TensorLayout::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct TensorLayoutBuilder<State>(State);

                impl TensorLayoutBuilder<()> {
                    /// Setter for the [`uid` field](TensorLayout#structfield.uid).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn uid<T0>(self, value: T0) -> TensorLayoutBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<i64, i64>,
                    {
                        TensorLayoutBuilder((value,))
                    }

                    /// Sets the [`uid` field](TensorLayout#structfield.uid) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn uid_as_default(self) -> TensorLayoutBuilder<(::planus::DefaultValue,)> {
                        self.uid(::planus::DefaultValue)
                    }
                }

                impl<T0> TensorLayoutBuilder<(T0,)> {
                    /// Setter for the [`data_type` field](TensorLayout#structfield.data_type).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn data_type<T1>(self, value: T1) -> TensorLayoutBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<u8, u8>,
                    {
                        let (v0,) = self.0;
                        TensorLayoutBuilder((v0, value))
                    }

                    /// Sets the [`data_type` field](TensorLayout#structfield.data_type) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn data_type_as_default(
                        self,
                    ) -> TensorLayoutBuilder<(T0, ::planus::DefaultValue)> {
                        self.data_type(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> TensorLayoutBuilder<(T0, T1)> {
                    /// Setter for the [`dims` field](TensorLayout#structfield.dims).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn dims<T2>(self, value: T2) -> TensorLayoutBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1) = self.0;
                        TensorLayoutBuilder((v0, v1, value))
                    }

                    /// Sets the [`dims` field](TensorLayout#structfield.dims) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn dims_as_null(self) -> TensorLayoutBuilder<(T0, T1, ())> {
                        self.dims(())
                    }
                }

                impl<T0, T1, T2> TensorLayoutBuilder<(T0, T1, T2)> {
                    /// Setter for the [`strides` field](TensorLayout#structfield.strides).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn strides<T3>(self, value: T3) -> TensorLayoutBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2) = self.0;
                        TensorLayoutBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`strides` field](TensorLayout#structfield.strides) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn strides_as_null(self) -> TensorLayoutBuilder<(T0, T1, T2, ())> {
                        self.strides(())
                    }
                }

                impl<T0, T1, T2, T3> TensorLayoutBuilder<(T0, T1, T2, T3)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [TensorLayout].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<TensorLayout>
                    where
                        Self: ::planus::WriteAsOffset<TensorLayout>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsDefault<u8, u8>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    > ::planus::WriteAs<::planus::Offset<TensorLayout>>
                    for TensorLayoutBuilder<(T0, T1, T2, T3)>
                {
                    type Prepared = ::planus::Offset<TensorLayout>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<TensorLayout> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsDefault<u8, u8>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    > ::planus::WriteAsOptional<::planus::Offset<TensorLayout>>
                    for TensorLayoutBuilder<(T0, T1, T2, T3)>
                {
                    type Prepared = ::planus::Offset<TensorLayout>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<TensorLayout>>
                    {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<i64, i64>,
                        T1: ::planus::WriteAsDefault<u8, u8>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    > ::planus::WriteAsOffset<TensorLayout>
                    for TensorLayoutBuilder<(T0, T1, T2, T3)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<TensorLayout> {
                        let (v0, v1, v2, v3) = &self.0;
                        TensorLayout::create(builder, v0, v1, v2, v3)
                    }
                }

                /// Reference to a deserialized [TensorLayout].
                #[derive(Copy, Clone)]
                pub struct TensorLayoutRef<'a>(
                    #[allow(dead_code)] ::planus::table_reader::Table<'a>,
                );

                impl<'a> TensorLayoutRef<'a> {
                    /// Getter for the [`uid` field](TensorLayout#structfield.uid).
                    #[inline]
                    pub fn uid(&self) -> ::planus::Result<i64> {
                        ::core::result::Result::Ok(
                            self.0.access(0, "TensorLayout", "uid")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`data_type` field](TensorLayout#structfield.data_type).
                    #[inline]
                    pub fn data_type(&self) -> ::planus::Result<u8> {
                        ::core::result::Result::Ok(
                            self.0.access(1, "TensorLayout", "data_type")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`dims` field](TensorLayout#structfield.dims).
                    #[inline]
                    pub fn dims(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(2, "TensorLayout", "dims")
                    }

                    /// Getter for the [`strides` field](TensorLayout#structfield.strides).
                    #[inline]
                    pub fn strides(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(3, "TensorLayout", "strides")
                    }
                }

                impl<'a> ::core::fmt::Debug for TensorLayoutRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("TensorLayoutRef");
                        f.field("uid", &self.uid());
                        f.field("data_type", &self.data_type());
                        if let ::core::option::Option::Some(field_dims) = self.dims().transpose() {
                            f.field("dims", &field_dims);
                        }
                        if let ::core::option::Option::Some(field_strides) =
                            self.strides().transpose()
                        {
                            f.field("strides", &field_strides);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<TensorLayoutRef<'a>> for TensorLayout {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: TensorLayoutRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            uid: ::core::convert::TryInto::try_into(value.uid()?)?,
                            data_type: ::core::convert::TryInto::try_into(value.data_type()?)?,
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
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for TensorLayoutRef<'a> {
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

                impl<'a> ::planus::VectorReadInner<'a> for TensorLayoutRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[TensorLayoutRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<TensorLayout>> for TensorLayout {
                    type Value = ::planus::Offset<TensorLayout>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<TensorLayout>],
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

                impl<'a> ::planus::ReadAsRoot<'a> for TensorLayoutRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[TensorLayoutRef]", "read_as_root", 0)
                        })
                    }
                }

                /// The table `PlanEnvelope` in the namespace `kiln.fb.plan`
                ///
                /// Generated from these locations:
                /// * Table `PlanEnvelope` in the file `schemas/plan.fbs:21`
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
                pub struct PlanEnvelope {
                    ///  Envelope version: 1 or 2.
                    pub version: u32,
                    ///  64-bit FNV-1a hash of the engine's unique name.
                    pub engine_id: u64,
                    /// The field `engine_name` in the table `PlanEnvelope`
                    pub engine_name: ::core::option::Option<::planus::alloc::string::String>,
                    ///  Name of the plugin that made the payload (diagnostic only).
                    pub plugin_name: ::core::option::Option<::planus::alloc::string::String>,
                    ///  Version of that plugin (diagnostic only).
                    pub plugin_version: ::core::option::Option<::planus::alloc::string::String>,
                    ///  Workspace bytes the plan needs at execute.
                    pub workspace_size: u64,
                    ///  UIDs of the tensors bound at execute, in the plugin's order.
                    pub tensor_uids: ::core::option::Option<::planus::alloc::vec::Vec<i64>>,
                    ///  The plugin's opaque payload. Its first byte lies 16-byte aligned relative to the start of
                    ///  the blob (kiln's writer places it so; readers refuse it otherwise).
                    pub payload: ::core::option::Option<::planus::alloc::vec::Vec<u8>>,
                    ///  Version 2: required device-pointer alignment in bytes for each `tensor_uids` entry, in the
                    ///  same order; 0 = no check.
                    pub alignments: ::core::option::Option<::planus::alloc::vec::Vec<u32>>,
                    ///  Optional (version 2 only): the layout of each bound tensor, one per `tensor_uids` entry in
                    ///  the same order. Lets a loader check that a plan fits a graph, and run a plan alone safely.
                    ///  Absent in version 1.
                    pub tensor_layouts:
                        ::core::option::Option<::planus::alloc::vec::Vec<self::TensorLayout>>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for PlanEnvelope {
                    fn default() -> Self {
                        Self {
                            version: 0,
                            engine_id: 0,
                            engine_name: ::core::default::Default::default(),
                            plugin_name: ::core::default::Default::default(),
                            plugin_version: ::core::default::Default::default(),
                            workspace_size: 0,
                            tensor_uids: ::core::default::Default::default(),
                            payload: ::core::default::Default::default(),
                            alignments: ::core::default::Default::default(),
                            tensor_layouts: ::core::default::Default::default(),
                        }
                    }
                }

                impl PlanEnvelope {
                    /// Creates a [PlanEnvelopeBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> PlanEnvelopeBuilder<()> {
                        PlanEnvelopeBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_version: impl ::planus::WriteAsDefault<u32, u32>,
                        field_engine_id: impl ::planus::WriteAsDefault<u64, u64>,
                        field_engine_name: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                        field_plugin_name: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                        field_plugin_version: impl ::planus::WriteAsOptional<
                            ::planus::Offset<::core::primitive::str>,
                        >,
                        field_workspace_size: impl ::planus::WriteAsDefault<u64, u64>,
                        field_tensor_uids: impl ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        field_payload: impl ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                        field_alignments: impl ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                        field_tensor_layouts: impl ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::TensorLayout>]>,
                        >,
                    ) -> ::planus::Offset<Self> {
                        let prepared_version = field_version.prepare(builder, &0);
                        let prepared_engine_id = field_engine_id.prepare(builder, &0);
                        let prepared_engine_name = field_engine_name.prepare(builder);
                        let prepared_plugin_name = field_plugin_name.prepare(builder);
                        let prepared_plugin_version = field_plugin_version.prepare(builder);
                        let prepared_workspace_size = field_workspace_size.prepare(builder, &0);
                        let prepared_tensor_uids = field_tensor_uids.prepare(builder);
                        let prepared_payload = field_payload.prepare(builder);
                        let prepared_alignments = field_alignments.prepare(builder);
                        let prepared_tensor_layouts = field_tensor_layouts.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<24> =
                            ::core::default::Default::default();
                        if prepared_engine_id.is_some() {
                            table_writer.write_entry::<u64>(1);
                        }
                        if prepared_workspace_size.is_some() {
                            table_writer.write_entry::<u64>(5);
                        }
                        if prepared_version.is_some() {
                            table_writer.write_entry::<u32>(0);
                        }
                        if prepared_engine_name.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(2);
                        }
                        if prepared_plugin_name.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(3);
                        }
                        if prepared_plugin_version.is_some() {
                            table_writer.write_entry::<::planus::Offset<str>>(4);
                        }
                        if prepared_tensor_uids.is_some() {
                            table_writer.write_entry::<::planus::Offset<[i64]>>(6);
                        }
                        if prepared_payload.is_some() {
                            table_writer.write_entry::<::planus::Offset<[u8]>>(7);
                        }
                        if prepared_alignments.is_some() {
                            table_writer.write_entry::<::planus::Offset<[u32]>>(8);
                        }
                        if prepared_tensor_layouts.is_some() {
                            table_writer.write_entry::<::planus::Offset<[::planus::Offset<self::TensorLayout>]>>(9);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                if let ::core::option::Option::Some(prepared_engine_id) =
                                    prepared_engine_id
                                {
                                    object_writer.write::<_, _, 8>(&prepared_engine_id);
                                }
                                if let ::core::option::Option::Some(prepared_workspace_size) =
                                    prepared_workspace_size
                                {
                                    object_writer.write::<_, _, 8>(&prepared_workspace_size);
                                }
                                if let ::core::option::Option::Some(prepared_version) =
                                    prepared_version
                                {
                                    object_writer.write::<_, _, 4>(&prepared_version);
                                }
                                if let ::core::option::Option::Some(prepared_engine_name) =
                                    prepared_engine_name
                                {
                                    object_writer.write::<_, _, 4>(&prepared_engine_name);
                                }
                                if let ::core::option::Option::Some(prepared_plugin_name) =
                                    prepared_plugin_name
                                {
                                    object_writer.write::<_, _, 4>(&prepared_plugin_name);
                                }
                                if let ::core::option::Option::Some(prepared_plugin_version) =
                                    prepared_plugin_version
                                {
                                    object_writer.write::<_, _, 4>(&prepared_plugin_version);
                                }
                                if let ::core::option::Option::Some(prepared_tensor_uids) =
                                    prepared_tensor_uids
                                {
                                    object_writer.write::<_, _, 4>(&prepared_tensor_uids);
                                }
                                if let ::core::option::Option::Some(prepared_payload) =
                                    prepared_payload
                                {
                                    object_writer.write::<_, _, 4>(&prepared_payload);
                                }
                                if let ::core::option::Option::Some(prepared_alignments) =
                                    prepared_alignments
                                {
                                    object_writer.write::<_, _, 4>(&prepared_alignments);
                                }
                                if let ::core::option::Option::Some(prepared_tensor_layouts) =
                                    prepared_tensor_layouts
                                {
                                    object_writer.write::<_, _, 4>(&prepared_tensor_layouts);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<PlanEnvelope>> for PlanEnvelope {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PlanEnvelope> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<PlanEnvelope>> for PlanEnvelope {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<PlanEnvelope>>
                    {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<PlanEnvelope> for PlanEnvelope {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PlanEnvelope> {
                        PlanEnvelope::create(
                            builder,
                            self.version,
                            self.engine_id,
                            &self.engine_name,
                            &self.plugin_name,
                            &self.plugin_version,
                            self.workspace_size,
                            &self.tensor_uids,
                            &self.payload,
                            &self.alignments,
                            &self.tensor_layouts,
                        )
                    }
                }

                /// Builder for serializing an instance of the [PlanEnvelope] type.
                ///
                /// Can be created using the [PlanEnvelope::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct PlanEnvelopeBuilder<State>(State);

                impl PlanEnvelopeBuilder<()> {
                    /// Setter for the [`version` field](PlanEnvelope#structfield.version).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn version<T0>(self, value: T0) -> PlanEnvelopeBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAsDefault<u32, u32>,
                    {
                        PlanEnvelopeBuilder((value,))
                    }

                    /// Sets the [`version` field](PlanEnvelope#structfield.version) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn version_as_default(
                        self,
                    ) -> PlanEnvelopeBuilder<(::planus::DefaultValue,)> {
                        self.version(::planus::DefaultValue)
                    }
                }

                impl<T0> PlanEnvelopeBuilder<(T0,)> {
                    /// Setter for the [`engine_id` field](PlanEnvelope#structfield.engine_id).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn engine_id<T1>(self, value: T1) -> PlanEnvelopeBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsDefault<u64, u64>,
                    {
                        let (v0,) = self.0;
                        PlanEnvelopeBuilder((v0, value))
                    }

                    /// Sets the [`engine_id` field](PlanEnvelope#structfield.engine_id) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn engine_id_as_default(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, ::planus::DefaultValue)> {
                        self.engine_id(::planus::DefaultValue)
                    }
                }

                impl<T0, T1> PlanEnvelopeBuilder<(T0, T1)> {
                    /// Setter for the [`engine_name` field](PlanEnvelope#structfield.engine_name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn engine_name<T2>(self, value: T2) -> PlanEnvelopeBuilder<(T0, T1, T2)>
                    where
                        T2: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        let (v0, v1) = self.0;
                        PlanEnvelopeBuilder((v0, v1, value))
                    }

                    /// Sets the [`engine_name` field](PlanEnvelope#structfield.engine_name) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn engine_name_as_null(self) -> PlanEnvelopeBuilder<(T0, T1, ())> {
                        self.engine_name(())
                    }
                }

                impl<T0, T1, T2> PlanEnvelopeBuilder<(T0, T1, T2)> {
                    /// Setter for the [`plugin_name` field](PlanEnvelope#structfield.plugin_name).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn plugin_name<T3>(self, value: T3) -> PlanEnvelopeBuilder<(T0, T1, T2, T3)>
                    where
                        T3: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        let (v0, v1, v2) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, value))
                    }

                    /// Sets the [`plugin_name` field](PlanEnvelope#structfield.plugin_name) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn plugin_name_as_null(self) -> PlanEnvelopeBuilder<(T0, T1, T2, ())> {
                        self.plugin_name(())
                    }
                }

                impl<T0, T1, T2, T3> PlanEnvelopeBuilder<(T0, T1, T2, T3)> {
                    /// Setter for the [`plugin_version` field](PlanEnvelope#structfield.plugin_version).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn plugin_version<T4>(
                        self,
                        value: T4,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4)>
                    where
                        T4: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                    {
                        let (v0, v1, v2, v3) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, v3, value))
                    }

                    /// Sets the [`plugin_version` field](PlanEnvelope#structfield.plugin_version) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn plugin_version_as_null(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, ())> {
                        self.plugin_version(())
                    }
                }

                impl<T0, T1, T2, T3, T4> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4)> {
                    /// Setter for the [`workspace_size` field](PlanEnvelope#structfield.workspace_size).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn workspace_size<T5>(
                        self,
                        value: T5,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5)>
                    where
                        T5: ::planus::WriteAsDefault<u64, u64>,
                    {
                        let (v0, v1, v2, v3, v4) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, v3, v4, value))
                    }

                    /// Sets the [`workspace_size` field](PlanEnvelope#structfield.workspace_size) to the default value.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn workspace_size_as_default(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, ::planus::DefaultValue)>
                    {
                        self.workspace_size(::planus::DefaultValue)
                    }
                }

                impl<T0, T1, T2, T3, T4, T5> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5)> {
                    /// Setter for the [`tensor_uids` field](PlanEnvelope#structfield.tensor_uids).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn tensor_uids<T6>(
                        self,
                        value: T6,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6)>
                    where
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                    {
                        let (v0, v1, v2, v3, v4, v5) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, v3, v4, v5, value))
                    }

                    /// Sets the [`tensor_uids` field](PlanEnvelope#structfield.tensor_uids) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn tensor_uids_as_null(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, ())> {
                        self.tensor_uids(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6)> {
                    /// Setter for the [`payload` field](PlanEnvelope#structfield.payload).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn payload<T7>(
                        self,
                        value: T7,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)>
                    where
                        T7: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    {
                        let (v0, v1, v2, v3, v4, v5, v6) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, v3, v4, v5, v6, value))
                    }

                    /// Sets the [`payload` field](PlanEnvelope#structfield.payload) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn payload_as_null(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, ())> {
                        self.payload(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6, T7> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7)> {
                    /// Setter for the [`alignments` field](PlanEnvelope#structfield.alignments).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn alignments<T8>(
                        self,
                        value: T8,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
                    where
                        T8: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                    {
                        let (v0, v1, v2, v3, v4, v5, v6, v7) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, v3, v4, v5, v6, v7, value))
                    }

                    /// Sets the [`alignments` field](PlanEnvelope#structfield.alignments) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn alignments_as_null(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, ())>
                    {
                        self.alignments(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6, T7, T8> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)> {
                    /// Setter for the [`tensor_layouts` field](PlanEnvelope#structfield.tensor_layouts).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn tensor_layouts<T9>(
                        self,
                        value: T9,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9)>
                    where
                        T9: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::TensorLayout>]>,
                        >,
                    {
                        let (v0, v1, v2, v3, v4, v5, v6, v7, v8) = self.0;
                        PlanEnvelopeBuilder((v0, v1, v2, v3, v4, v5, v6, v7, v8, value))
                    }

                    /// Sets the [`tensor_layouts` field](PlanEnvelope#structfield.tensor_layouts) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn tensor_layouts_as_null(
                        self,
                    ) -> PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8, ())>
                    {
                        self.tensor_layouts(())
                    }
                }

                impl<T0, T1, T2, T3, T4, T5, T6, T7, T8, T9>
                    PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9)>
                {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [PlanEnvelope].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PlanEnvelope>
                    where
                        Self: ::planus::WriteAsOffset<PlanEnvelope>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<u32, u32>,
                        T1: ::planus::WriteAsDefault<u64, u64>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T5: ::planus::WriteAsDefault<u64, u64>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                        T8: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                        T9: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::TensorLayout>]>,
                        >,
                    > ::planus::WriteAs<::planus::Offset<PlanEnvelope>>
                    for PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9)>
                {
                    type Prepared = ::planus::Offset<PlanEnvelope>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PlanEnvelope> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<u32, u32>,
                        T1: ::planus::WriteAsDefault<u64, u64>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T5: ::planus::WriteAsDefault<u64, u64>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                        T8: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                        T9: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::TensorLayout>]>,
                        >,
                    > ::planus::WriteAsOptional<::planus::Offset<PlanEnvelope>>
                    for PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9)>
                {
                    type Prepared = ::planus::Offset<PlanEnvelope>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<PlanEnvelope>>
                    {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAsDefault<u32, u32>,
                        T1: ::planus::WriteAsDefault<u64, u64>,
                        T2: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T3: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T4: ::planus::WriteAsOptional<::planus::Offset<::core::primitive::str>>,
                        T5: ::planus::WriteAsDefault<u64, u64>,
                        T6: ::planus::WriteAsOptional<::planus::Offset<[i64]>>,
                        T7: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                        T8: ::planus::WriteAsOptional<::planus::Offset<[u32]>>,
                        T9: ::planus::WriteAsOptional<
                            ::planus::Offset<[::planus::Offset<self::TensorLayout>]>,
                        >,
                    > ::planus::WriteAsOffset<PlanEnvelope>
                    for PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8, T9)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PlanEnvelope> {
                        let (v0, v1, v2, v3, v4, v5, v6, v7, v8, v9) = &self.0;
                        PlanEnvelope::create(builder, v0, v1, v2, v3, v4, v5, v6, v7, v8, v9)
                    }
                }

                /// Reference to a deserialized [PlanEnvelope].
                #[derive(Copy, Clone)]
                pub struct PlanEnvelopeRef<'a>(
                    #[allow(dead_code)] ::planus::table_reader::Table<'a>,
                );

                impl<'a> PlanEnvelopeRef<'a> {
                    /// Getter for the [`version` field](PlanEnvelope#structfield.version).
                    #[inline]
                    pub fn version(&self) -> ::planus::Result<u32> {
                        ::core::result::Result::Ok(
                            self.0.access(0, "PlanEnvelope", "version")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`engine_id` field](PlanEnvelope#structfield.engine_id).
                    #[inline]
                    pub fn engine_id(&self) -> ::planus::Result<u64> {
                        ::core::result::Result::Ok(
                            self.0.access(1, "PlanEnvelope", "engine_id")?.unwrap_or(0),
                        )
                    }

                    /// Getter for the [`engine_name` field](PlanEnvelope#structfield.engine_name).
                    #[inline]
                    pub fn engine_name(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(2, "PlanEnvelope", "engine_name")
                    }

                    /// Getter for the [`plugin_name` field](PlanEnvelope#structfield.plugin_name).
                    #[inline]
                    pub fn plugin_name(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(3, "PlanEnvelope", "plugin_name")
                    }

                    /// Getter for the [`plugin_version` field](PlanEnvelope#structfield.plugin_version).
                    #[inline]
                    pub fn plugin_version(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<&'a ::core::primitive::str>>
                    {
                        self.0.access(4, "PlanEnvelope", "plugin_version")
                    }

                    /// Getter for the [`workspace_size` field](PlanEnvelope#structfield.workspace_size).
                    #[inline]
                    pub fn workspace_size(&self) -> ::planus::Result<u64> {
                        ::core::result::Result::Ok(
                            self.0
                                .access(5, "PlanEnvelope", "workspace_size")?
                                .unwrap_or(0),
                        )
                    }

                    /// Getter for the [`tensor_uids` field](PlanEnvelope#structfield.tensor_uids).
                    #[inline]
                    pub fn tensor_uids(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, i64>>>
                    {
                        self.0.access(6, "PlanEnvelope", "tensor_uids")
                    }

                    /// Getter for the [`payload` field](PlanEnvelope#structfield.payload).
                    #[inline]
                    pub fn payload(&self) -> ::planus::Result<::core::option::Option<&'a [u8]>> {
                        self.0.access(7, "PlanEnvelope", "payload")
                    }

                    /// Getter for the [`alignments` field](PlanEnvelope#structfield.alignments).
                    #[inline]
                    pub fn alignments(
                        &self,
                    ) -> ::planus::Result<::core::option::Option<::planus::Vector<'a, u32>>>
                    {
                        self.0.access(8, "PlanEnvelope", "alignments")
                    }

                    /// Getter for the [`tensor_layouts` field](PlanEnvelope#structfield.tensor_layouts).
                    #[inline]
                    pub fn tensor_layouts(
                        &self,
                    ) -> ::planus::Result<
                        ::core::option::Option<
                            ::planus::Vector<'a, ::planus::Result<self::TensorLayoutRef<'a>>>,
                        >,
                    > {
                        self.0.access(9, "PlanEnvelope", "tensor_layouts")
                    }
                }

                impl<'a> ::core::fmt::Debug for PlanEnvelopeRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("PlanEnvelopeRef");
                        f.field("version", &self.version());
                        f.field("engine_id", &self.engine_id());
                        if let ::core::option::Option::Some(field_engine_name) =
                            self.engine_name().transpose()
                        {
                            f.field("engine_name", &field_engine_name);
                        }
                        if let ::core::option::Option::Some(field_plugin_name) =
                            self.plugin_name().transpose()
                        {
                            f.field("plugin_name", &field_plugin_name);
                        }
                        if let ::core::option::Option::Some(field_plugin_version) =
                            self.plugin_version().transpose()
                        {
                            f.field("plugin_version", &field_plugin_version);
                        }
                        f.field("workspace_size", &self.workspace_size());
                        if let ::core::option::Option::Some(field_tensor_uids) =
                            self.tensor_uids().transpose()
                        {
                            f.field("tensor_uids", &field_tensor_uids);
                        }
                        if let ::core::option::Option::Some(field_payload) =
                            self.payload().transpose()
                        {
                            f.field("payload", &field_payload);
                        }
                        if let ::core::option::Option::Some(field_alignments) =
                            self.alignments().transpose()
                        {
                            f.field("alignments", &field_alignments);
                        }
                        if let ::core::option::Option::Some(field_tensor_layouts) =
                            self.tensor_layouts().transpose()
                        {
                            f.field("tensor_layouts", &field_tensor_layouts);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<PlanEnvelopeRef<'a>> for PlanEnvelope {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: PlanEnvelopeRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            version: ::core::convert::TryInto::try_into(value.version()?)?,
                            engine_id: ::core::convert::TryInto::try_into(value.engine_id()?)?,
                            engine_name: value.engine_name()?.map(::core::convert::Into::into),
                            plugin_name: value.plugin_name()?.map(::core::convert::Into::into),
                            plugin_version: value
                                .plugin_version()?
                                .map(::core::convert::Into::into),
                            workspace_size: ::core::convert::TryInto::try_into(
                                value.workspace_size()?,
                            )?,
                            tensor_uids: if let ::core::option::Option::Some(tensor_uids) =
                                value.tensor_uids()?
                            {
                                ::core::option::Option::Some(tensor_uids.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            payload: value.payload()?.map(|v| v.to_vec()),
                            alignments: if let ::core::option::Option::Some(alignments) =
                                value.alignments()?
                            {
                                ::core::option::Option::Some(alignments.to_vec()?)
                            } else {
                                ::core::option::Option::None
                            },
                            tensor_layouts: if let ::core::option::Option::Some(tensor_layouts) =
                                value.tensor_layouts()?
                            {
                                ::core::option::Option::Some(tensor_layouts.to_vec_result()?)
                            } else {
                                ::core::option::Option::None
                            },
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for PlanEnvelopeRef<'a> {
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

                impl<'a> ::planus::VectorReadInner<'a> for PlanEnvelopeRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[PlanEnvelopeRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<PlanEnvelope>> for PlanEnvelope {
                    type Value = ::planus::Offset<PlanEnvelope>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<PlanEnvelope>],
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

                impl<'a> ::planus::ReadAsRoot<'a> for PlanEnvelopeRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[PlanEnvelopeRef]", "read_as_root", 0)
                        })
                    }
                }
            }
        }
    }
}
