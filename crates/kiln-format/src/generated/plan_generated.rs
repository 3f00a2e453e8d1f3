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
                /// The table `PlanEnvelope` in the namespace `kiln.fb.plan`
                ///
                /// Generated from these locations:
                /// * Table `PlanEnvelope` in the file `schemas/plan.fbs:10`
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

                        let mut table_writer: ::planus::table_writer::TableWriter<22> =
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
                    > ::planus::WriteAs<::planus::Offset<PlanEnvelope>>
                    for PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
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
                    > ::planus::WriteAsOptional<::planus::Offset<PlanEnvelope>>
                    for PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
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
                    > ::planus::WriteAsOffset<PlanEnvelope>
                    for PlanEnvelopeBuilder<(T0, T1, T2, T3, T4, T5, T6, T7, T8)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<PlanEnvelope> {
                        let (v0, v1, v2, v3, v4, v5, v6, v7, v8) = &self.0;
                        PlanEnvelope::create(builder, v0, v1, v2, v3, v4, v5, v6, v7, v8)
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
