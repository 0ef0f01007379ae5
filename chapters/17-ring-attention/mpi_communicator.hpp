// Chapter 17's network: sa::Communicator over Open MPI (any MPI), for the chapter's program.
//
// A ring of G ranks runs on however many processes mpirun started: rank g runs on process
// g mod (the number of processes), so the program prints the same numbers with 1, 2 or 4
// processes, and with G processes each rank has one of its own. Every message is an
// MPI_Isend or MPI_Irecv on a communicator of the ring's own, tagged with its two ranks.
// Started without mpirun, the program is one process that runs every rank and copies each
// message in memory (sa::LocalCommunicator), without starting MPI. Compiled without MPI (the
// book's playground, WebAssembly in the page), BOOK_WITH_MPI is not defined and that is the
// only way it runs.
#pragma once

#ifdef BOOK_WITH_MPI
#include <mpi.h>
#endif

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ring_attention.hpp"

namespace ring {

// Whether mpirun (Open MPI's or MPICH's) started this process.
inline bool launched_by_mpirun()
{
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
        if (std::getenv(name) != nullptr) {
            return true;
        }
    }
    return false;
}

// The process's place among the processes mpirun started, read before MPI is started (so a
// refused command line is reported once, by the first process): Open MPI's and MPICH's variables.
inline int launch_rank()
{
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
        if (const char* value = std::getenv(name)) {
            return std::atoi(value);
        }
    }
    return 0;
}

#ifdef BOOK_WITH_MPI
// MPI from MPI_Init to MPI_Finalize.
class MpiSession {
public:
    MpiSession()
    {
        MPI_Init(nullptr, nullptr);
        MPI_Comm_rank(MPI_COMM_WORLD, &process_);
        MPI_Comm_size(MPI_COMM_WORLD, &processes_);
    }
    ~MpiSession() { MPI_Finalize(); }
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;
    [[nodiscard]] int process() const { return process_; }
    [[nodiscard]] int processes() const { return processes_; }

private:
    int process_ = 0;
    int processes_ = 1;
};

class MpiCommunicator : public sa::Communicator {
public:
    // A ring of `ranks` ranks; `stop_rank`, when below `ranks`, fails on purpose at its first send.
    MpiCommunicator(const MpiSession& session, std::size_t ranks, std::size_t stop_rank)
        : process_(static_cast<std::size_t>(session.process())),
          processes_(static_cast<std::size_t>(session.processes())), ranks_(ranks), stop_rank_(stop_rank)
    {
        MPI_Comm_dup(MPI_COMM_WORLD, &communicator_);  // this ring's messages cannot meet another's
    }
    ~MpiCommunicator() override { MPI_Comm_free(&communicator_); }
    MpiCommunicator(const MpiCommunicator&) = delete;
    MpiCommunicator& operator=(const MpiCommunicator&) = delete;

    [[nodiscard]] bool runs(std::size_t rank) const override { return rank % processes_ == process_; }

    void send(std::size_t from, std::size_t to, const std::vector<double>& message) override
    {
        if (from == stop_rank_) {
            throw std::runtime_error(fmt::format("rank {} stopped on purpose before its first send (--stop-rank {})",
                                                 from, from));
        }
        requests_.emplace_back();
        MPI_Isend(message.data(), static_cast<int>(message.size()), MPI_DOUBLE, process_of(to), tag(from, to),
                  communicator_, &requests_.back());
    }

    void receive(std::size_t from, std::size_t to, std::vector<double>& into) override
    {
        requests_.emplace_back();
        receives_.push_back({from, to, requests_.size() - 1, into.size()});
        MPI_Irecv(into.data(), static_cast<int>(into.size()), MPI_DOUBLE, process_of(from), tag(from, to),
                  communicator_, &requests_.back());
    }

    void wait() override
    {
        std::vector<MPI_Status> statuses(requests_.size());
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), statuses.data());
        for (const Receive& receive : receives_) {  // a shorter message than expected is not an MPI error
            int count = 0;
            MPI_Get_count(&statuses[receive.request], MPI_DOUBLE, &count);
            if (static_cast<std::size_t>(count) != receive.expected) {
                throw std::runtime_error(fmt::format("rank {} expected {} numbers from rank {} but got {}",
                                                     receive.to, receive.expected, receive.from, count));
            }
        }
        requests_.clear();
        receives_.clear();
    }

private:
    struct Receive {
        std::size_t from;
        std::size_t to;
        std::size_t request;
        std::size_t expected;
    };
    [[nodiscard]] int process_of(std::size_t rank) const { return static_cast<int>(rank % processes_); }
    [[nodiscard]] int tag(std::size_t from, std::size_t to) const { return static_cast<int>(from * ranks_ + to); }

    std::size_t process_;
    std::size_t processes_;
    std::size_t ranks_;
    std::size_t stop_rank_;
    MPI_Comm communicator_ = MPI_COMM_NULL;
    std::vector<MPI_Request> requests_;
    std::vector<Receive> receives_;
};

#endif  // BOOK_WITH_MPI

// The ranks in this one process, for a run without mpirun; --stop-rank fails as over MPI.
class LocalRing : public sa::LocalCommunicator {
public:
    explicit LocalRing(std::size_t stop_rank) : stop_rank_(stop_rank) {}
    void send(std::size_t from, std::size_t to, const std::vector<double>& message) override
    {
        if (from == stop_rank_) {
            throw std::runtime_error(fmt::format("rank {} stopped on purpose before its first send (--stop-rank {})",
                                                 from, from));
        }
        sa::LocalCommunicator::send(from, to, message);
    }

private:
    std::size_t stop_rank_;
};

// What the program's rings run on: MPI when mpirun started it, else this one process.
#ifdef BOOK_WITH_MPI
class Network {
public:
    explicit Network(std::size_t stop_rank) : stop_rank_(stop_rank)
    {
        if (launched_by_mpirun()) {
            session_.emplace();
        }
    }
    [[nodiscard]] bool on_mpi() const { return session_.has_value(); }
    [[nodiscard]] int process() const { return session_ ? session_->process() : 0; }
    // The communicator of one ring of `ranks` ranks.
    [[nodiscard]] std::unique_ptr<sa::Communicator> ring(std::size_t ranks) const
    {
        if (session_) {
            return std::make_unique<MpiCommunicator>(*session_, ranks, stop_rank_);
        }
        return std::make_unique<LocalRing>(stop_rank_);
    }
    // One rank failed: say so and end every process, so none is left waiting for its messages.
    [[noreturn]] void abort_all(const char* what) const
    {
        std::fprintf(stderr, "ch17-ring-attention: process %d: %s\n", process(), what);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
        std::abort();  // MPI_Abort does not return
    }

private:
    std::size_t stop_rank_;
    std::optional<MpiSession> session_;
};
#else
class Network {  // no MPI compiled in: every rank in this one process
public:
    explicit Network(std::size_t stop_rank) : stop_rank_(stop_rank) {}
    [[nodiscard]] bool on_mpi() const { return false; }
    [[nodiscard]] int process() const { return 0; }
    [[nodiscard]] std::unique_ptr<sa::Communicator> ring(std::size_t /*ranks*/) const
    {
        return std::make_unique<LocalRing>(stop_rank_);
    }
    [[noreturn]] void abort_all(const char* /*what*/) const { std::abort(); }

private:
    std::size_t stop_rank_;
};
#endif

}  // namespace ring
