pub use root::*;

const _: () = ::planus::check_version_compatibility("planus-1.3.0");

/// The root namespace
///
/// Generated from these locations:
/// * File `schemas/container.fbs`
#[no_implicit_prelude]
#[allow(clippy::needless_lifetimes)]
mod root {
    /// The namespace `kiln`
    ///
    /// Generated from these locations:
    /// * File `schemas/container.fbs`
    pub mod kiln {
        /// The namespace `kiln.fb`
        ///
        /// Generated from these locations:
        /// * File `schemas/container.fbs`
        pub mod fb {
            /// The namespace `kiln.fb.container`
            ///
            /// Generated from these locations:
            /// * File `schemas/container.fbs`
            pub mod container {
                /// The table `Container` in the namespace `kiln.fb.container`
                ///
                /// Generated from these locations:
                /// * Table `Container` in the file `schemas/container.fbs:8`
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
                pub struct Container {
                    ///  A complete graph blob (kind 1).
                    pub graph: ::planus::alloc::vec::Vec<u8>,
                    ///  A complete plan blob (kind 2), when the plan was saved with its graph.
                    pub plan: ::core::option::Option<::planus::alloc::vec::Vec<u8>>,
                }

                #[allow(clippy::derivable_impls)]
                impl ::core::default::Default for Container {
                    fn default() -> Self {
                        Self {
                            graph: ::core::default::Default::default(),
                            plan: ::core::default::Default::default(),
                        }
                    }
                }

                impl Container {
                    /// Creates a [ContainerBuilder] for serializing an instance of this table.
                    #[inline]
                    pub fn builder() -> ContainerBuilder<()> {
                        ContainerBuilder(())
                    }

                    #[allow(clippy::too_many_arguments)]
                    pub fn create(
                        builder: &mut ::planus::Builder,
                        field_graph: impl ::planus::WriteAs<::planus::Offset<[u8]>>,
                        field_plan: impl ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    ) -> ::planus::Offset<Self> {
                        let prepared_graph = field_graph.prepare(builder);
                        let prepared_plan = field_plan.prepare(builder);

                        let mut table_writer: ::planus::table_writer::TableWriter<8> =
                            ::core::default::Default::default();
                        table_writer.write_entry::<::planus::Offset<[u8]>>(0);
                        if prepared_plan.is_some() {
                            table_writer.write_entry::<::planus::Offset<[u8]>>(1);
                        }

                        unsafe {
                            table_writer.finish(builder, |object_writer| {
                                object_writer.write::<_, _, 4>(&prepared_graph);
                                if let ::core::option::Option::Some(prepared_plan) = prepared_plan {
                                    object_writer.write::<_, _, 4>(&prepared_plan);
                                }
                            });
                        }
                        builder.current_offset()
                    }
                }

                impl ::planus::WriteAs<::planus::Offset<Container>> for Container {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Container> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl ::planus::WriteAsOptional<::planus::Offset<Container>> for Container {
                    type Prepared = ::planus::Offset<Self>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Container>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl ::planus::WriteAsOffset<Container> for Container {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Container> {
                        Container::create(builder, &self.graph, &self.plan)
                    }
                }

                /// Builder for serializing an instance of the [Container] type.
                ///
                /// Can be created using the [Container::builder] method.
                #[derive(Debug)]
                #[must_use]
                pub struct ContainerBuilder<State>(State);

                impl ContainerBuilder<()> {
                    /// Setter for the [`graph` field](Container#structfield.graph).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn graph<T0>(self, value: T0) -> ContainerBuilder<(T0,)>
                    where
                        T0: ::planus::WriteAs<::planus::Offset<[u8]>>,
                    {
                        ContainerBuilder((value,))
                    }
                }

                impl<T0> ContainerBuilder<(T0,)> {
                    /// Setter for the [`plan` field](Container#structfield.plan).
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn plan<T1>(self, value: T1) -> ContainerBuilder<(T0, T1)>
                    where
                        T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    {
                        let (v0,) = self.0;
                        ContainerBuilder((v0, value))
                    }

                    /// Sets the [`plan` field](Container#structfield.plan) to null.
                    #[inline]
                    #[allow(clippy::type_complexity)]
                    pub fn plan_as_null(self) -> ContainerBuilder<(T0, ())> {
                        self.plan(())
                    }
                }

                impl<T0, T1> ContainerBuilder<(T0, T1)> {
                    /// Finish writing the builder to get an [Offset](::planus::Offset) to a serialized [Container].
                    #[inline]
                    pub fn finish(
                        self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Container>
                    where
                        Self: ::planus::WriteAsOffset<Container>,
                    {
                        ::planus::WriteAsOffset::prepare(&self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<[u8]>>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    > ::planus::WriteAs<::planus::Offset<Container>>
                    for ContainerBuilder<(T0, T1)>
                {
                    type Prepared = ::planus::Offset<Container>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Container> {
                        ::planus::WriteAsOffset::prepare(self, builder)
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<[u8]>>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    > ::planus::WriteAsOptional<::planus::Offset<Container>>
                    for ContainerBuilder<(T0, T1)>
                {
                    type Prepared = ::planus::Offset<Container>;

                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::core::option::Option<::planus::Offset<Container>> {
                        ::core::option::Option::Some(::planus::WriteAsOffset::prepare(
                            self, builder,
                        ))
                    }
                }

                impl<
                        T0: ::planus::WriteAs<::planus::Offset<[u8]>>,
                        T1: ::planus::WriteAsOptional<::planus::Offset<[u8]>>,
                    > ::planus::WriteAsOffset<Container> for ContainerBuilder<(T0, T1)>
                {
                    #[inline]
                    fn prepare(
                        &self,
                        builder: &mut ::planus::Builder,
                    ) -> ::planus::Offset<Container> {
                        let (v0, v1) = &self.0;
                        Container::create(builder, v0, v1)
                    }
                }

                /// Reference to a deserialized [Container].
                #[derive(Copy, Clone)]
                pub struct ContainerRef<'a>(#[allow(dead_code)] ::planus::table_reader::Table<'a>);

                impl<'a> ContainerRef<'a> {
                    /// Getter for the [`graph` field](Container#structfield.graph).
                    #[inline]
                    pub fn graph(&self) -> ::planus::Result<&'a [u8]> {
                        self.0.access_required(0, "Container", "graph")
                    }

                    /// Getter for the [`plan` field](Container#structfield.plan).
                    #[inline]
                    pub fn plan(&self) -> ::planus::Result<::core::option::Option<&'a [u8]>> {
                        self.0.access(1, "Container", "plan")
                    }
                }

                impl<'a> ::core::fmt::Debug for ContainerRef<'a> {
                    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        let mut f = f.debug_struct("ContainerRef");
                        f.field("graph", &self.graph());
                        if let ::core::option::Option::Some(field_plan) = self.plan().transpose() {
                            f.field("plan", &field_plan);
                        }
                        f.finish()
                    }
                }

                impl<'a> ::core::convert::TryFrom<ContainerRef<'a>> for Container {
                    type Error = ::planus::Error;

                    #[allow(unreachable_code)]
                    fn try_from(value: ContainerRef<'a>) -> ::planus::Result<Self> {
                        ::core::result::Result::Ok(Self {
                            graph: value.graph()?.to_vec(),
                            plan: value.plan()?.map(|v| v.to_vec()),
                        })
                    }
                }

                impl<'a> ::planus::TableRead<'a> for ContainerRef<'a> {
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

                impl<'a> ::planus::VectorReadInner<'a> for ContainerRef<'a> {
                    type Error = ::planus::Error;
                    const STRIDE: usize = 4;

                    unsafe fn from_buffer(
                        buffer: ::planus::SliceWithStartOffset<'a>,
                        offset: usize,
                    ) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(buffer, offset).map_err(|error_kind| {
                            error_kind.with_error_location(
                                "[ContainerRef]",
                                "get",
                                buffer.offset_from_start,
                            )
                        })
                    }
                }

                /// # Safety
                /// The planus compiler generates implementations that initialize
                /// the bytes in `write_values`.
                unsafe impl ::planus::VectorWrite<::planus::Offset<Container>> for Container {
                    type Value = ::planus::Offset<Container>;
                    const STRIDE: usize = 4;
                    #[inline]
                    fn prepare(&self, builder: &mut ::planus::Builder) -> Self::Value {
                        ::planus::WriteAs::prepare(self, builder)
                    }

                    #[inline]
                    unsafe fn write_values(
                        values: &[::planus::Offset<Container>],
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

                impl<'a> ::planus::ReadAsRoot<'a> for ContainerRef<'a> {
                    fn read_as_root(slice: &'a [u8]) -> ::planus::Result<Self> {
                        ::planus::TableRead::from_buffer(
                            ::planus::SliceWithStartOffset {
                                buffer: slice,
                                offset_from_start: 0,
                            },
                            0,
                        )
                        .map_err(|error_kind| {
                            error_kind.with_error_location("[ContainerRef]", "read_as_root", 0)
                        })
                    }
                }
            }
        }
    }
}
