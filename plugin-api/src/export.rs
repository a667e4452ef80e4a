//! [`export_plugin!`]: the one macro that turns a build function into a plugin library.

/// Export a plugin from a `cdylib` crate.
///
/// `export_plugin!(build)` takes a function `fn(&Host) -> Plugin` (or
/// `-> Result<Plugin, E: Display>`), and:
/// - exports the abi_stable root module the host loads (`init` + `register`), with every
///   call into your code guarded by `catch_unwind`;
/// - embeds the crate's `plugin.toml` and this SDK's version in the library (see
///   [`embed`](crate::embed)), so the host can check the library before loading it.
///
/// `export_plugin!(build, manifest = "path/relative/to/crate/plugin.toml")` embeds
/// another manifest file.
///
/// Use it once per crate, at the top level. The crate must be built with
/// `crate-type = ["cdylib"]` and must not set `panic = "abort"`.
#[macro_export]
macro_rules! export_plugin {
    ($build:path) => {
        $crate::export_plugin!($build, manifest = "plugin.toml");
    };
    ($build:path, manifest = $manifest:literal) => {
        #[doc(hidden)]
        #[used]
        // A named link section is an unsafe attribute: the section holds only this
        // manifest, which the host reads as bytes.
        #[allow(unsafe_code)]
        #[cfg_attr(
            all(unix, not(target_vendor = "apple")),
            unsafe(link_section = ".toolhost_plugin")
        )]
        #[cfg_attr(target_vendor = "apple", unsafe(link_section = "__DATA,__toolhost"))]
        #[cfg_attr(windows, unsafe(link_section = ".thplug"))]
        static __TOOLHOST_PLUGIN_MANIFEST: $crate::embed::EmbeddedManifest<
            {
                ::core::include_bytes!(::core::concat!(
                    ::core::env!("CARGO_MANIFEST_DIR"),
                    "/",
                    $manifest
                ))
                .len()
            },
        > = $crate::embed::EmbeddedManifest::new(*::core::include_bytes!(::core::concat!(
            ::core::env!("CARGO_MANIFEST_DIR"),
            "/",
            $manifest
        )));

        #[doc(hidden)]
        fn __toolhost_plugin_build(
            host: &$crate::Host,
        ) -> ::core::result::Result<$crate::Plugin, $crate::__private::String> {
            $crate::IntoPlugin::into_plugin($build(host))
        }

        #[doc(hidden)]
        fn __toolhost_plugin_root_module() -> $crate::abi::PluginModuleRef {
            __TOOLHOST_PLUGIN_MANIFEST.keep();
            $crate::__private::root_module(__toolhost_plugin_build)
        }

        /// The abi_stable library header (`abi_stable::library::ROOT_MODULE_LOADER_NAME`).
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        // The one exported symbol, under the name abi_stable's loader looks up; the
        // constructor call below is the crate's justified unsafe block.
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub static _1as_0lib_1header_0root_bmodule_bloader:
            $crate::__private::abi_stable::library::LibHeader = {
            extern "C" fn __toolhost_plugin_constructor()
            -> $crate::__private::abi_stable::library::RootModuleResult {
                $crate::__private::abi_stable::library::__call_root_module_loader(
                    __toolhost_plugin_root_module,
                )
            }
            // SAFETY: the constructor returns the root module of type `PluginModuleRef`,
            // as `from_constructor` requires.
            unsafe {
                $crate::__private::abi_stable::library::LibHeader::from_constructor::<
                    $crate::abi::PluginModuleRef,
                >(
                    __toolhost_plugin_constructor,
                    $crate::__private::abi_stable::library::CheckTypeLayout::Yes,
                )
            }
        };
    };
}
