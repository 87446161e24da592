//===- SafetensorsWriter.cpp - Safetensors writer -------------------------===//

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/CheckedMath.h"
#include "qtensor/Support/FileIO.h"

#include "SafetensorsDetail.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::safetensors;
using impl::quote;

Status SafetensorsWriter::checkNewTensor(const std::string &name, DType dtype,
                                         const std::vector<int64_t> &shape,
                                         uint64_t size) const {
  std::string prefix = "safetensors writer: tensor " + quote(name) + ": ";
  if (static_cast<unsigned>(dtype) >= kNumDTypes)
    return makeError(prefix, "invalid dtype");
  if (name == "__metadata__")
    return makeError(prefix, "the name is reserved for the metadata map");
  if (auto bad = impl::findInvalidUtf8(name))
    return makeError(prefix, "name is not valid UTF-8 (byte ", *bad, ")");
  for (const Entry &e : entries)
    if (e.name == name)
      return makeError(prefix, "duplicate tensor name");
  if (entries.size() >= opts.limits.maxTensors)
    return makeError(prefix, "more than ", opts.limits.maxTensors,
                     " tensors (the limit)");
  if (shape.size() > opts.limits.maxRank)
    return makeError(prefix, "rank ", shape.size(), " exceeds the limit ",
                     opts.limits.maxRank);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return makeError(prefix, "shape[", i, "] = ", shape[i], " is negative");
  auto count = checkedElementCount(shape);
  auto need = count ? checkedMul(*count, dtypeSize(dtype)) : std::nullopt;
  if (!need)
    return makeError(prefix, "byte size of the shape overflows 64 bits");
  if (*need != size)
    return makeError(prefix, dtypeName(dtype), " shape needs ", *need,
                     " bytes but ", size, " were given");
  return Status::ok();
}

Status SafetensorsWriter::addTensor(std::string name, DType dtype,
                                    std::vector<int64_t> shape,
                                    std::vector<uint8_t> bytes) {
  QTENSOR_TRY(checkNewTensor(name, dtype, shape, bytes.size()));
  try {
    Entry e{std::move(name),  dtype,   std::move(shape),
            std::move(bytes), nullptr, 0};
    e.data = e.owned.data();
    e.size = e.owned.size();
    entries.push_back(std::move(e)); // moving the vector keeps its buffer
  } catch (const std::exception &ex) {
    return makeError("safetensors writer: ", ex.what());
  }
  return Status::ok();
}

Status SafetensorsWriter::addTensorRef(std::string name, DType dtype,
                                       std::vector<int64_t> shape,
                                       const uint8_t *data, uint64_t size) {
  QTENSOR_TRY(checkNewTensor(name, dtype, shape, size));
  if (size > 0 && !data)
    return makeError("safetensors writer: tensor ", quote(name),
                     ": null data pointer");
  try {
    entries.push_back(
        Entry{std::move(name), dtype, std::move(shape), {}, data, size});
  } catch (const std::exception &ex) {
    return makeError("safetensors writer: ", ex.what());
  }
  return Status::ok();
}

Status SafetensorsWriter::addTensor(const TensorView &view) {
  if (view.end < view.begin)
    return makeError("safetensors writer: tensor ", quote(view.name),
                     ": invalid view");
  return addTensorRef(view.name, view.dtype, view.shape, view.data,
                      view.end - view.begin);
}

Status SafetensorsWriter::addTensorFill(std::string name, DType dtype,
                                        std::vector<int64_t> shape,
                                        uint64_t size, Fill fill) {
  QTENSOR_TRY(checkNewTensor(name, dtype, shape, size));
  if (!fill)
    return makeError("safetensors writer: tensor ", quote(name),
                     ": no fill function");
  try {
    entries.push_back(Entry{std::move(name),
                            dtype,
                            std::move(shape),
                            {},
                            nullptr,
                            size,
                            std::move(fill)});
  } catch (const std::exception &ex) {
    return makeError("safetensors writer: ", ex.what());
  }
  return Status::ok();
}

Status SafetensorsWriter::setMetadata(std::string key, std::string value) {
  if (auto bad = impl::findInvalidUtf8(key))
    return makeError("safetensors writer: metadata key ", quote(key),
                     " is not valid UTF-8 (byte ", *bad, ")");
  if (auto bad = impl::findInvalidUtf8(value))
    return makeError("safetensors writer: metadata value of ", quote(key),
                     " is not valid UTF-8 (byte ", *bad, ")");
  if (!meta.count(key) && meta.size() >= opts.limits.maxMetadataEntries)
    return makeError("safetensors writer: more than ",
                     opts.limits.maxMetadataEntries,
                     " metadata entries (the limit)");
  try {
    meta[std::move(key)] = std::move(value);
  } catch (const std::exception &ex) {
    return makeError("safetensors writer: ", ex.what());
  }
  return Status::ok();
}

/// The reference crate's order: descending dtype (= alignment), then name.
std::vector<const SafetensorsWriter::Entry *>
SafetensorsWriter::ordered() const {
  std::vector<const Entry *> out;
  out.reserve(entries.size());
  for (const Entry &e : entries)
    out.push_back(&e);
  std::sort(out.begin(), out.end(), [](const Entry *a, const Entry *b) {
    if (a->dtype != b->dtype)
      return static_cast<unsigned>(a->dtype) > static_cast<unsigned>(b->dtype);
    return a->name < b->name;
  });
  return out;
}

Expected<std::string> SafetensorsWriter::header() const {
  uint64_t align = opts.bufferAlignment;
  if (align < 8 || (align & (align - 1)) != 0)
    return makeError("safetensors writer: buffer alignment ", align,
                     " is not a power of two >= 8");
  try {
    using ojson = nlohmann::ordered_json;
    ojson root = ojson::object();
    if (!meta.empty()) {
      ojson m = ojson::object();
      for (const auto &[k, v] : meta)
        m[k] = v;
      root["__metadata__"] = std::move(m);
    }
    uint64_t offset = 0;
    for (const Entry *e : ordered()) {
      auto end = checkedAdd(offset, e->size);
      if (!end)
        return makeError("safetensors writer: total payload overflows 64 bits");
      ojson t = ojson::object();
      t["dtype"] = std::string(dtypeName(e->dtype));
      t["shape"] = e->shape;
      t["data_offsets"] = ojson::array({offset, *end});
      root[e->name] = std::move(t);
      offset = *end;
    }
    std::string text = root.dump(-1, ' ', /*ensure_ascii=*/false,
                                 ojson::error_handler_t::strict);
    // Pad with spaces so that the byte buffer (at 8 + N) is aligned.
    uint64_t unaligned = 8 + text.size();
    uint64_t pad = (align - unaligned % align) % align;
    text.append(static_cast<size_t>(pad), ' ');
    if (text.size() > opts.limits.maxHeaderBytes)
      return makeError("safetensors writer: header of ", text.size(),
                       " bytes exceeds the limit of ",
                       opts.limits.maxHeaderBytes);
    return text;
  } catch (const std::exception &ex) {
    return makeError("safetensors writer: cannot build the header: ",
                     ex.what());
  }
}

Expected<uint64_t> SafetensorsWriter::fileSize() const {
  auto text = header();
  if (!text)
    return text.error();
  uint64_t total = 8 + text->size();
  for (const Entry &e : entries) {
    auto next = checkedAdd(total, e.size);
    if (!next)
      return makeError("safetensors writer: file size overflows 64 bits");
    total = *next;
  }
  return total;
}

Expected<uint64_t> SafetensorsWriter::write(int fd,
                                            const std::string &name) const {
  std::string target =
      name.empty() ? "file descriptor " + std::to_string(fd) : name;
  auto text = header();
  if (!text)
    return makeError(target, ": ", text.message());
  uint8_t prefix[8];
  uint64_t n = text->size();
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<uint8_t>(n >> (8 * i));
  uint64_t written = 0;
  QTENSOR_TRY(writeAll(fd, prefix, 8, target, written));
  QTENSOR_TRY(writeAll(fd, reinterpret_cast<const uint8_t *>(text->data()), n,
                       target, written));
  std::vector<uint8_t> produced; // the one filled tensor held at a time
  for (const Entry *e : ordered()) {
    if (!e->fill) {
      QTENSOR_TRY(writeAll(fd, e->data, e->size, target, written));
      continue;
    }
    try {
      produced.resize(static_cast<size_t>(e->size));
    } catch (const std::exception &ex) {
      return makeError(target, ": tensor ", quote(e->name), ": ", ex.what());
    }
    if (Status st = e->fill(produced.data(), e->size); !st)
      return makeError(target, ": tensor ", quote(e->name), ": ", st.message());
    QTENSOR_TRY(writeAll(fd, produced.data(), e->size, target, written));
  }
  return written;
}

Expected<uint64_t> SafetensorsWriter::writeFile(const std::string &path) const {
  std::string tmpl = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    return makeError(path, ": cannot create a temporary file next to it: ",
                     std::strerror(errno));
  auto cleanup = [&](Error err) -> Expected<uint64_t> {
    ::close(fd);
    ::unlink(tmpl.c_str());
    return err;
  };
  if (::fchmod(fd, 0644) != 0)
    return cleanup(
        makeError(path, ": cannot set permissions: ", std::strerror(errno)));
  auto written = write(fd, path);
  if (!written)
    return cleanup(written.error());
  if (fileLayer().fsync(fd) != 0)
    return cleanup(makeError(path, ": fsync failed: ", std::strerror(errno)));
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    return makeError(path, ": close failed: ", std::strerror(err));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmpl.c_str());
    return makeError(path, ": cannot rename the temporary file into place: ",
                     std::strerror(err));
  }
  // Persist the rename itself (best effort: not every file system allows it).
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return *written;
}
