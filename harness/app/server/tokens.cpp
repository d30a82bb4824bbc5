#include "harness/app/server/tokens.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench::server {

namespace {

constexpr const char* k_prefix = "abt_";
constexpr size_t k_secret_bytes = 32, k_salt_bytes = 16;

std::string hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

std::string random_hex(size_t bytes) {
  std::string buf(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), (int)bytes) != 1)
    throw error("OpenSSL RAND_bytes failed: no random bytes for a token");
  return hex(reinterpret_cast<const unsigned char*>(buf.data()), bytes);
}

std::string hash_of(const std::string& salt, const std::string& secret) {
  return sha256_hex(salt + secret);
}

// "abt_<id>_<secret>" -> (id, secret); nullopt when it has another shape.
std::optional<std::pair<int64_t, std::string>> split_token(const std::string& token) {
  if (token.rfind(k_prefix, 0) != 0)
    return std::nullopt;
  const size_t sep = token.find('_', 4);
  if (sep == std::string::npos)
    return std::nullopt;
  int64_t id = 0;
  auto [end, ec] = std::from_chars(token.data() + 4, token.data() + sep, id);
  if (ec != std::errc() || end != token.data() + sep || id <= 0)
    return std::nullopt;
  std::string secret = token.substr(sep + 1);
  if (secret.size() != 2 * k_secret_bytes)
    return std::nullopt;
  return std::make_pair(id, secret);
}

} // namespace

std::string to_string(role r) {
  switch (r) {
  case role::read:
    return "read";
  case role::write:
    return "write";
  case role::admin:
    return "admin";
  }
  return "read";
}

role role_from_string(const std::string& s) {
  if (s == "read")
    return role::read;
  if (s == "write")
    return role::write;
  if (s == "admin")
    return role::admin;
  throw input_error(fmt::format("unknown token role '{}' (read, write, admin)", s));
}

bool allows(role have, role need) { return static_cast<int>(have) >= static_cast<int>(need); }

std::string sha256_hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1)
    throw error("OpenSSL EVP_Digest(SHA-256) failed");
  return hex(md, n);
}

created_token create_token(store::store& db, const std::string& name, role r) {
  if (name.empty())
    throw input_error("a token needs a name (--name), e.g. the machine or job that uses it");
  created_token out;
  const std::string secret = random_hex(k_secret_bytes);
  out.record.name = name;
  out.record.role = to_string(r);
  out.record.salt = random_hex(k_salt_bytes);
  out.record.hash = hash_of(out.record.salt, secret);
  out.record.created_at = now_iso8601();
  out.record.id = db.insert_token(out.record);
  out.token = fmt::format("{}{}_{}", k_prefix, out.record.id, secret);
  return out;
}

std::optional<role> check_token(store::store& db, const std::string& token) {
  auto parts = split_token(token);
  if (!parts)
    return std::nullopt;
  auto rec = db.get_token(parts->first);
  if (!rec || !rec->revoked_at.empty())
    return std::nullopt;
  const std::string h = hash_of(rec->salt, parts->second);
  if (h.size() != rec->hash.size() || CRYPTO_memcmp(h.data(), rec->hash.data(), h.size()) != 0)
    return std::nullopt;
  try {
    return role_from_string(rec->role);
  } catch (const input_error&) {
    return std::nullopt;
  }
}

} // namespace accelbench::server
