// torsh::Error -> torsh_backend.TorshError, carrying the code, the op, shapes,
// dtypes, device and suggestions as attributes. The exception class is plain
// Python (torsh_backend/_errors.py) so it pickles and documents like any other.
#include <Python.h>

#include "common.hpp"

namespace torsh::py {
namespace {

nb::list to_list(const std::vector<std::string>& v) {
  nb::list l;
  for (const auto& s : v) l.append(text(s));
  return l;
}

void raise_python(const Error& e) {
  nb::object cls;
  try {
    cls = nb::module_::import_("torsh_backend._errors").attr("TorshError");
  } catch (nb::python_error&) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return;
  }
  const auto& c = e.context();
  nb::dict kw;
  kw["code"] = nb::str(std::string(error_code_name(e.code())).c_str());
  kw["message"] = text(e.message());
  kw["op"] = text(c.op);
  kw["shapes"] = to_list(c.shapes);
  kw["dtypes"] = to_list(c.dtypes);
  kw["device"] = text(c.device);
  kw["suggestions"] = to_list(e.suggestions());
  try {
    nb::object exc = cls(text(e.what()), **kw);
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (nb::python_error& pe) {
    pe.restore();
  }
}

}  // namespace

nb::str text(const std::string& s) {
  return nb::steal<nb::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

[[noreturn]] void raise_error(ErrorCode code, const std::string& msg, const std::string& op,
                              std::vector<std::string> suggestions) {
  throw Error(code, msg, ErrorContext{.op = op}, std::move(suggestions));
}

void bind_errors(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_python(e);
    }
  });
}

}  // namespace torsh::py
