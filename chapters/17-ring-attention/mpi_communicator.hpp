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

#include <algorithm>
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

    // One MPI_Alltoall over this ring's processes: each process packs, for every process, the messages
    // of the ranks it runs (ascending) to the ranks that process runs (ascending), and unpacks in the
    // same order. Where the counts differ between processes (G does not divide n, or the processes run
    // unequal numbers of ranks), MPI_Alltoallv, its form with a count per process.
    //> mpi-all-to-all
    void all_to_all(const sa::AllToAll& outgoing, sa::AllToAll& incoming) override
    {
        std::vector<int> send_counts(processes_, 0);
        std::vector<int> receive_counts(processes_, 0);
        std::vector<double> packed;
        for (std::size_t process = 0; process < processes_; ++process) {
            const std::size_t before = packed.size();
            for_pairs(process_, process, [&](std::size_t from, std::size_t to) {
                packed.insert(packed.end(), outgoing[from][to].begin(), outgoing[from][to].end());
            });
            send_counts[process] = static_cast<int>(packed.size() - before);
            for_pairs(process, process_, [&](std::size_t from, std::size_t to) {
                receive_counts[process] += static_cast<int>(incoming[to][from].size());
            });
        }
        std::vector<double> received(static_cast<std::size_t>(offsets(receive_counts).back()));
        // Every process must make the same call: MPI_Alltoall only when all send the same count everywhere.
        const auto [fewest, most] = std::minmax_element(send_counts.begin(), send_counts.end());
        int bounds[2] = {*fewest, -*most};
        MPI_Allreduce(MPI_IN_PLACE, bounds, 2, MPI_INT, MPI_MIN, communicator_);
        if (bounds[0] == -bounds[1]) {
            MPI_Alltoall(packed.data(), send_counts[0], MPI_DOUBLE, received.data(), receive_counts[0], MPI_DOUBLE,
                         communicator_);
        } else {
            MPI_Alltoallv(packed.data(), send_counts.data(), offsets(send_counts).data(), MPI_DOUBLE, received.data(),
                          receive_counts.data(), offsets(receive_counts).data(), MPI_DOUBLE, communicator_);
        }
        std::size_t at = 0;
        for (std::size_t process = 0; process < processes_; ++process) {
            for_pairs(process, process_, [&](std::size_t from, std::size_t to) {
                std::copy_n(received.begin() + static_cast<std::ptrdiff_t>(at), incoming[to][from].size(),
                            incoming[to][from].begin());
                at += incoming[to][from].size();
            });
        }
    }
    //< mpi-all-to-all

private:
    // Calls visit(from, to) for every rank `from` of one process and `to` of another, in the packing order.
    template <typename Visit>
    void for_pairs(std::size_t sender, std::size_t receiver, Visit visit) const
    {
        for (std::size_t from = sender; from < ranks_; from += processes_) {
            for (std::size_t to = receiver; to < ranks_; to += processes_) {
                visit(from, to);
            }
        }
    }
    // Where each process's numbers start, and at the end their total.
    static std::vector<int> offsets(const std::vector<int>& counts)
    {
        std::vector<int> starts{0};
        for (const int count : counts) {
            starts.push_back(starts.back() + count);
        }
        return starts;
    }
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
    [[nodiscard]] int processes() const { return session_ ? session_->processes() : 1; }
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
    [[nodiscard]] int processes() const { return 1; }
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
