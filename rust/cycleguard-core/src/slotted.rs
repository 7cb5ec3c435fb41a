//! Instances of a frozen slotted dataclass (`SpanData`, `SpanEvent`) made from Rust as
//! `wire._spandata.new_span` makes them: the class's allocator (what `object.__new__`
//! calls), then each field's slot descriptor (what `object.__setattr__` calls; the class's
//! own `__setattr__` refuses, the class being frozen). Called through the type slots rather
//! than through Python, a span costs a fraction of `new_span`'s call.

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};

/// A slotted class and how to fill it, its fields in a fixed order.
/// Owned handles, so a long-lived object (the conventions reader) can keep one.
pub struct Slotted {
    class: Py<PyType>,
    alloc: ffi::allocfunc,
    /// Each field's member descriptor and its type's setter.
    fields: Vec<(Py<PyAny>, ffi::descrsetfunc)>,
}

impl Slotted {
    /// `fields`: the class's field names as the dataclass lists them, which must be
    /// `expected` (a field added to the class must fail loudly rather than leave a slot
    /// unset); each must be a slot (a member descriptor) of the class.
    pub fn new(
        class: Bound<'_, PyType>,
        fields: &Bound<'_, PyTuple>,
        expected: &[&str],
    ) -> PyResult<Self> {
        let py = class.py();
        let names = fields
            .iter()
            .map(|f| f.downcast_into::<PyString>().map_err(PyErr::from))
            .collect::<PyResult<Vec<_>>>()?;
        let same = names.len() == expected.len()
            && names
                .iter()
                .zip(expected)
                .all(|(n, e)| n.to_str().is_ok_and(|n| n == *e));
        if !same {
            return Err(PyValueError::new_err(format!(
                "the compiled OTLP decoder fills the fields {expected:?}, the class has {fields}"
            )));
        }
        let member = py.import("types")?.getattr("MemberDescriptorType")?;
        // SAFETY: `class` is a live type object (GIL held). PyType_GetSlot reads a slot of
        // a heap type (a class statement makes one), and of a static type since Python
        // 3.10 (the least this extension is built for); it answers null for an empty slot,
        // which the Option of a function pointer represents (its null niche), so the
        // transmute only renames a pointer of the slot's own signature.
        let alloc: Option<ffi::allocfunc> = unsafe {
            std::mem::transmute(ffi::PyType_GetSlot(class.as_type_ptr(), ffi::Py_tp_alloc))
        };
        let alloc = alloc.ok_or_else(|| PyValueError::new_err("the class has no allocator"))?;
        let mut slots = Vec::with_capacity(names.len());
        for name in &names {
            let descriptor = class.getattr(name)?; // a member descriptor, from its class
            let kind = descriptor.get_type();
            if !kind.is(&member) {
                return Err(PyValueError::new_err(format!(
                    "{name} is not a slot of {class}"
                )));
            }
            // SAFETY: as above, for the member descriptor type (static) and its setter slot.
            let set: Option<ffi::descrsetfunc> = unsafe {
                std::mem::transmute(ffi::PyType_GetSlot(
                    kind.as_type_ptr(),
                    ffi::Py_tp_descr_set,
                ))
            };
            let set = set.ok_or_else(|| PyValueError::new_err("a slot without a setter"))?;
            slots.push((descriptor.unbind(), set));
        }
        Ok(Slotted {
            class: class.unbind(),
            alloc,
            fields: slots,
        })
    }

    /// A new instance with `values` in its fields (as many as the fields, in their order).
    pub fn make<'py>(
        &self,
        py: Python<'py>,
        values: &[&Bound<'py, PyAny>],
    ) -> PyResult<Bound<'py, PyAny>> {
        if values.len() != self.fields.len() {
            return Err(PyValueError::new_err("one value a field"));
        }
        // SAFETY: `alloc` is the class's own tp_alloc, called as `object.__new__` calls it
        // (the class is no abstract class: a dataclass); the GIL is held. The answer is a
        // new reference to an instance with empty slots, or null with an exception set,
        // which `from_owned_ptr_or_err` takes over.
        let obj = unsafe {
            Bound::from_owned_ptr_or_err(py, (self.alloc)(self.class.bind(py).as_type_ptr(), 0))
        }?;
        for ((descriptor, set), value) in self.fields.iter().zip(values) {
            // SAFETY: `set` is the member descriptor type's tp_descr_set, called with that
            // descriptor, a live instance (it checks the instance's type itself) and a live
            // non-null value, all borrowed for the call (it takes its own reference to the
            // value); the GIL is held.
            let rc = unsafe { set(descriptor.as_ptr(), obj.as_ptr(), value.as_ptr()) };
            if rc != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(obj)
    }
}

/// Reads the fields of one slotted class's instances (`ToolCall`, `ModelTurn`) as
/// `getattr` does, without its look-up: for an instance of exactly that class,
/// `PyObject_GenericGetAttr` finds the field's member descriptor on the class and calls its
/// `tp_descr_get`; this calls that function on the descriptor found once. Anything else (a
/// subclass, another type, a class whose attribute access is its own) is read by `getattr`.
/// A class attribute reassigned after the reader was made is not seen (the records are
/// frozen dataclasses; nothing reassigns their fields on the class).
pub struct SlotReader {
    class: Py<PyType>,
    /// The names, in the caller's order (the `getattr` of everything else).
    names: Vec<Py<PyString>>,
    /// Each name's member descriptor and its type's getter; empty when the class is not
    /// read through them (then every read is `getattr`).
    fields: Vec<(Py<PyAny>, ffi::descrgetfunc)>,
}

impl SlotReader {
    /// A reader of `names` on `class`: through the descriptors when each name is a slot of
    /// the class and the class keeps the generic attribute access, else by `getattr`.
    pub fn new(class: &Bound<'_, PyType>, names: &[&str]) -> PyResult<Self> {
        let py = class.py();
        let interned = names
            .iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect();
        let member = py.import("types")?.getattr("MemberDescriptorType")?;
        // SAFETY: `class` is a live type object (GIL held); PyType_GetSlot reads a slot of any
        // type since Python 3.10 (the least this extension is built for) and answers null for
        // an empty one. Only the pointer is compared, never called.
        let getattro = unsafe { ffi::PyType_GetSlot(class.as_type_ptr(), ffi::Py_tp_getattro) };
        let generic = ffi::PyObject_GenericGetAttr as *mut std::ffi::c_void;
        let mut fields = Vec::with_capacity(names.len());
        if getattro == generic {
            for name in names {
                let descriptor = class.getattr(*name)?; // its own member descriptor
                let kind = descriptor.get_type();
                if !kind.is(&member) {
                    fields.clear();
                    break;
                }
                // SAFETY: as above, for the member descriptor type (static) and its getter
                // slot; the Option of a function pointer represents the null of an empty slot
                // (its null niche), so the transmute only renames a pointer of the slot's own
                // signature.
                let get: Option<ffi::descrgetfunc> = unsafe {
                    std::mem::transmute(ffi::PyType_GetSlot(
                        kind.as_type_ptr(),
                        ffi::Py_tp_descr_get,
                    ))
                };
                let Some(get) = get else {
                    fields.clear();
                    break;
                };
                fields.push((descriptor.unbind(), get));
            }
        }
        Ok(SlotReader {
            class: class.clone().unbind(),
            names: interned,
            fields,
        })
    }

    /// `getattr(obj, names[field])`.
    #[inline]
    pub fn get<'py>(&self, obj: &Bound<'py, PyAny>, field: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = obj.py();
        if let Some((descriptor, get)) = self.fields.get(field) {
            let class = self.class.bind(py);
            // SAFETY: `obj` is a live object (borrowed, GIL held); Py_TYPE reads its type
            // pointer (the stable ABI's ob_type), compared, not kept.
            if unsafe { ffi::Py_TYPE(obj.as_ptr()) } == class.as_type_ptr() {
                // SAFETY: `get` is the member descriptor type's tp_descr_get, called as
                // PyObject_GenericGetAttr calls it for this exact class: the class's own
                // descriptor, a live instance of the class and the class, all borrowed for
                // the call (GIL held). It answers a new reference, or null with an exception
                // set (an empty slot: AttributeError, as getattr), which
                // `from_owned_ptr_or_err` takes over.
                return unsafe {
                    Bound::from_owned_ptr_or_err(
                        py,
                        get(
                            descriptor.as_ptr(),
                            obj.as_ptr(),
                            class.as_type_ptr().cast(),
                        ),
                    )
                };
            }
        }
        obj.getattr(self.names[field].bind(py))
    }
}
