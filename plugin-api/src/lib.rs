//! The stable ABI and SDK for toolhost native tool plugins (built in the native-plugin
//! issue).
